#include "core/report/compare_json.h"

#include "core/report/report_envelope.h"

#include <cmath>

namespace matmulviz {

namespace {

using Json = nlohmann::ordered_json;

Json seconds(double s) {
  return std::isfinite(s) ? Json(s) : Json(nullptr);
}

Json bytesPair(int64_t a, int64_t b) {
  return Json{{"a", a}, {"b", b}, {"difference", b - a}};
}

Json peak(const TimelinePeak& p) {
  return Json{{"bytes", p.bytes}, {"event", p.event}, {"time_us", p.timeUs}};
}

Json peakPair(const TimelinePeak& a, const TimelinePeak& b) {
  return Json{{"a", peak(a)}, {"b", peak(b)}, {"difference_bytes", b.bytes - a.bytes}};
}

Json bytesList(const std::vector<BytesDiff>& rows) {
  Json out = Json::array();
  for (const BytesDiff& d : rows)
    out.push_back({{"name", d.name}, {"a", d.a}, {"b", d.b}, {"difference", d.difference()}});
  return out;
}

Json strategy(const StrategyDiff& d) {
  auto error = [](bool in, bool ok, const std::string& e) {
    return in && !ok ? Json(e) : Json(nullptr);
  };
  return Json{{"strategy", d.strategy},
              {"in_a", d.inA},
              {"in_b", d.inB},
              {"ok_a", d.okA},
              {"ok_b", d.okB},
              {"error_a", error(d.inA, d.okA, d.errorA)},
              {"error_b", error(d.inB, d.okB, d.errorB)},
              {"max_mem_bytes", bytesPair(d.maxMemA, d.maxMemB)},
              {"cur_mem_bytes", bytesPair(d.curMemA, d.curMemB)},
              {"time_median_s",
               {{"a", seconds(d.timeA)},
                {"b", seconds(d.timeB)},
                {"difference", seconds(d.timeDifference())}}}};
}

Json timeline(const ComparedTimeline& t) {
  const TimelineComparison& d = t.difference;
  Json allocations = Json::array();
  for (const AllocationsDiff& x : d.allocationsByLabel)
    allocations.push_back({{"label", x.label},
                           {"count_a", x.countA},
                           {"count_b", x.countB},
                           {"bytes_a", x.bytesA},
                           {"bytes_b", x.bytesB},
                           {"difference", x.difference()}});
  return Json{{"name", t.name},
              {"name_a", t.nameA},
              {"name_b", t.nameB},
              {"events", {{"a", d.eventsA}, {"b", d.eventsB}}},
              {"start",
               {{"a", t.startA.empty() ? Json() : Json(t.startA)},
                {"b", t.startB.empty() ? Json() : Json(t.startB)}}},
              {"peak_allocated", peakPair(d.allocatedA, d.allocatedB)},
              {"peak_reserved", peakPair(d.reservedA, d.reservedB)},
              {"peak_by_category", bytesList(d.peakByCategory)},
              {"peak_by_label", bytesList(d.peakByLabel)},
              {"allocations_by_label", allocations}};
}

Json sequenceSide(const AllocationSequence& s) {
  return Json{{"name", s.name},
              {"events", s.events.size()},
              {"start", s.start},
              {"start_requested_bytes", s.startRequested},
              {"start_reserved_bytes", s.hasReserved() ? Json(s.startReserved) : Json(nullptr)},
              {"start_blocks", s.startBlocks}};
}

Json sequenceEvent(const AllocationSequence& s, int64_t x) {
  if (x < 0) return nullptr;
  const SequenceEvent& e = s.events[size_t(x)];
  const SequenceSite& site = s.sites[size_t(e.site)];
  return Json{{"event", x},
              {"source", e.source},
              {"action", e.alloc ? "alloc" : "free"},
              {"bytes", e.bytes},
              {"op", site.op},
              {"where", site.where},
              {"requested_bytes", e.requested},
              {"reserved_bytes", e.reserved < 0 ? Json(nullptr) : Json(e.reserved)}};
}

Json sequence(const ComparedSequence& c) {
  const SequenceAlignment& al = c.alignment;
  Json rows = Json::array();
  for (const AlignedRow& r : al.rows)
    rows.push_back({{"kind", alignedKindName(r.kind)},
                    {"a", sequenceEvent(*c.a, r.a)},
                    {"b", sequenceEvent(*c.b, r.b)}});
  auto row = [](int64_t x) { return x < 0 ? Json(nullptr) : Json(x); };
  Json divergence = nullptr;
  if (al.diverges()) {
    const AlignedRow& r = al.rows[size_t(al.firstDivergence)];
    divergence = {{"row", al.firstDivergence},
                  {"kind", alignedKindName(r.kind)},
                  {"a", sequenceEvent(*c.a, r.a)},
                  {"b", sequenceEvent(*c.b, r.b)},
                  {"text", describeDivergence(al, *c.a, *c.b)}};
  }
  return Json{{"name", c.name},
              {"a", sequenceSide(*c.a)},
              {"b", sequenceSide(*c.b)},
              {"matched", al.matched},
              {"first_divergence", divergence},
              {"first_requested_drift_row", row(al.firstRequestedDrift)},
              {"first_reserved_drift_row", row(al.firstReservedDrift)},
              {"rows", rows}};
}

}  // namespace

nlohmann::ordered_json compareToJson(const ReportComparison& c) {
  Json j = reportEnvelope("compare");
  j["a"] = c.fileA;
  j["b"] = c.fileB;
  if (c.hasStrategies) {
    j["setup_differences"] = c.strategies.setupDifferences;
    Json rows = Json::array();
    for (const StrategyDiff& d : c.strategies.strategies) rows.push_back(strategy(d));
    j["strategies"] = rows;
  } else {
    j["setup_differences"] = Json::array();
    j["strategies"] = nullptr;
  }
  Json timelines = Json::array();
  for (const ComparedTimeline& t : c.timelines) timelines.push_back(timeline(t));
  j["timelines"] = timelines;
  Json sequences = Json::array();
  for (const ComparedSequence& q : c.sequences) sequences.push_back(sequence(q));
  j["sequences"] = sequences;
  j["notes"] = c.notes;
  return j;
}

}  // namespace matmulviz
