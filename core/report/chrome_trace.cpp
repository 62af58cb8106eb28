#include "core/report/chrome_trace.h"
#include "core/util/format_units.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <unordered_map>
#include <vector>

namespace matmulviz {

namespace {

constexpr size_t kMaxCounterPoints = 20000;

/// Which events get a counter point: all of them for short runs; for long ones (a per-row loop
/// makes hundreds of thousands), in each of ~max/2 stretches the one with the most allocated and
/// the last one, so the peak and the shape survive.
std::vector<bool> thinCounters(const std::vector<MemoryEvent>& events, size_t maxPoints) {
  std::vector<bool> keep(events.size(), events.size() <= maxPoints);
  if (events.size() <= maxPoints) return keep;
  const size_t stretch = (events.size() + maxPoints / 2 - 1) / (maxPoints / 2);
  for (size_t begin = 0; begin < events.size(); begin += stretch) {
    const size_t end = std::min(events.size(), begin + stretch);
    size_t best = begin;
    for (size_t x = begin; x < end; ++x)
      if (events[x].after.allocatedBytes > events[best].after.allocatedBytes) best = x;
    keep[best] = true;
    keep[end - 1] = true;
  }
  return keep;
}

void writeEvent(std::ostream& os, bool& first, const nlohmann::json& e) {
  os << (first ? "\n" : ",\n") << e.dump();
  first = false;
}

void writeRun(std::ostream& os, bool& first, const StrategyRun& run, int pid,
              int64_t instantMinBytes) {
  const MemoryTimeline& t = run.timeline;
  writeEvent(
      os, first,
      {{"ph", "M"}, {"pid", pid}, {"name", "process_name"}, {"args", {{"name", run.strategy}}}});
  // Ops, with consecutive same-op spans at one depth merged.
  for (size_t s = 0; s < t.spans.size();) {
    size_t e = s + 1;
    while (e < t.spans.size() && t.spans[e].opId == t.spans[s].opId &&
           t.spans[e].depth == t.spans[s].depth)
      ++e;
    const auto count = static_cast<int64_t>(e - s);
    std::string name = t.opNames[t.spans[s].opId];
    if (count > 1) name += " x" + std::to_string(count);
    writeEvent(os, first,
               {{"ph", "X"},
                {"pid", pid},
                {"tid", t.spans[s].depth},
                {"name", name},
                {"cat", "op"},
                {"ts", t.spans[s].beginUs},
                {"dur", t.spans[e - 1].endUs - t.spans[s].beginUs}});
    s = e;
  }
  if (t.statementEndUs > 0)
    writeEvent(os, first,
               {{"ph", "i"},
                {"pid", pid},
                {"tid", 0},
                {"s", "p"},
                {"ts", t.statementEndUs},
                {"name", "end of `out = " + run.strategy + "(...)`: curMem and maxMem read here"}});
  std::unordered_map<int64_t, double> freedAt;
  for (const MemoryEvent& ev : t.events)
    if (ev.kind == MemoryEventKind::Free) freedAt[ev.allocationId] = ev.timeUs;
  std::unordered_map<int64_t, const AllocationRecord*> records;
  for (const auto& r : t.records) records[r.id] = &r;

  const std::vector<bool> counterKept = thinCounters(t.events, kMaxCounterPoints);
  for (size_t x = 0; x < t.events.size(); ++x) {
    const MemoryEvent& ev = t.events[x];
    if (counterKept[x])
      writeEvent(os, first,
                 {{"ph", "C"},
                  {"pid", pid},
                  {"name", "memory (MiB)"},
                  {"ts", ev.timeUs},
                  {"args",
                   {{"allocated", ev.after.allocatedBytes / kMiB},
                    {"requested", ev.after.requestedBytes / kMiB},
                    {"reserved", ev.after.reservedBytes / kMiB}}}});
    if (ev.kind == MemoryEventKind::Oom) {
      writeEvent(os, first,
                 {{"ph", "i"},
                  {"pid", pid},
                  {"tid", 0},
                  {"s", "p"},
                  {"ts", ev.timeUs},
                  {"name", "out of memory"},
                  {"args", {{"requested_bytes", ev.bytes}}}});
      continue;
    }
    if (ev.kind != MemoryEventKind::Alloc || ev.bytes < instantMinBytes) continue;
    const AllocationRecord* rec =
        records.count(ev.allocationId) ? records[ev.allocationId] : nullptr;
    std::string fate;
    if (auto it = freedAt.find(ev.allocationId); it != freedAt.end()) {
      fate = "freed at " + std::to_string(it->second / 1000.0) + " ms";
    } else if (auto w = t.aliveWhy.find(ev.allocationId); w != t.aliveWhy.end()) {
      fate = "alive after the statement: " + w->second;
    } else {
      fate = "alive at the end of the run";
    }
    writeEvent(os, first,
               {{"ph", "i"},
                {"pid", pid},
                {"tid", 0},
                {"s", "t"},
                {"ts", ev.timeUs},
                {"name", "alloc " + (rec ? rec->label : std::string("?"))},
                {"args",
                 {{"label", rec ? rec->label : ""},
                  {"op", t.opNames[ev.opId]},
                  {"bytes", ev.bytes},
                  {"requested_bytes", rec ? rec->requestedBytes : 0},
                  {"fate", fate}}}});
  }
}

}  // namespace

void writeChromeTrace(std::ostream& os, const StrategiesReport& report, int64_t instantMinBytes) {
  os << "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [";
  bool first = true;
  int pid = 1;
  for (const StrategyRun& run : report.runs) writeRun(os, first, run, pid++, instantMinBytes);
  os << "\n]}\n";
  if (!os) throw std::runtime_error("could not write the trace");
}

}  // namespace matmulviz
