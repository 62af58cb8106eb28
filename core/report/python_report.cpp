#include "core/report/python_report.h"

#include "core/util/saturating.h"

#include <algorithm>
#include <array>
#include <limits>
#include <unordered_map>

namespace matmulviz {

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr std::array kEventColumns{"kind", "id", "bytes", "time_us", "allocated", "reserved", "op"};
constexpr std::array kAllocationColumns{"id",          "label", "op",    "requested_bytes",
                                        "block_bytes", "pool",  "frame", "alive"};
constexpr std::array kEventKinds{MemoryEventKind::Alloc, MemoryEventKind::Free,
                                 MemoryEventKind::SegmentAlloc, MemoryEventKind::SegmentFree,
                                 MemoryEventKind::Oom};

/// The rows of table `key` of `doc`, and for each expected column its position.
template <size_t N>
std::pair<const nlohmann::json*, std::array<size_t, N>> table(
    const nlohmann::json& doc, const char* key, const std::array<const char*, N>& expected,
    const JsonReader& r) {
  const nlohmann::json& t = r.object(r.member(doc, "", key), key);
  const std::string at = jsonPath(key, "columns");
  const nlohmann::json& columns = r.array(r.member(t, key, "columns"), at);
  std::array<size_t, N> pos{};
  for (size_t c = 0; c < N; ++c) {
    pos[c] = columns.size();
    for (size_t x = 0; x < columns.size(); ++x)
      if (columns[x].is_string() && columns[x].get<std::string>() == expected[c]) pos[c] = x;
    if (pos[c] == columns.size()) r.fail(at, std::string("has no column '") + expected[c] + "'");
  }
  const nlohmann::json& rows = r.array(r.member(t, key, "rows"), jsonPath(key, "rows"));
  return {&rows, pos};
}

const nlohmann::json& rowAt(const nlohmann::json& rows, size_t x, const std::string& path,
                            size_t width, const JsonReader& r) {
  const nlohmann::json& row = r.array(rows[x], path);
  if (row.size() < width)
    r.fail(path, "has " + std::to_string(row.size()) + " values; the columns name " +
                     std::to_string(width));
  return row;
}

/// "file.py:12" for frame `index` of the report's frames.
std::string frameText(const nlohmann::json& frames, size_t index, const JsonReader& r) {
  const std::string at = jsonPath("frames", index);
  const nlohmann::json& f = r.object(frames[index], at);
  std::string file = r.string(r.member(f, at, "file"), jsonPath(at, "file"));
  if (const size_t slash = file.find_last_of('/'); slash != std::string::npos)
    file = file.substr(slash + 1);
  return file + ":" +
         std::to_string(r.integer(r.member(f, at, "line"), jsonPath(at, "line"), 0, kMax));
}

void readAllocations(const nlohmann::json& doc, const JsonReader& r, MemoryTimeline& t) {
  const nlohmann::json& frames =
      doc.contains("frames") ? r.array(doc["frames"], "frames") : nlohmann::json::array();
  // Not a structured binding: clang 14 (the fuzz build) cannot capture one in a lambda.
  const auto found = table(doc, "allocations", kAllocationColumns, r);
  const nlohmann::json* rows = found.first;
  const auto& pos = found.second;
  const auto ops = static_cast<int64_t>(t.opNames.size());
  for (size_t x = 0; x < rows->size(); ++x) {
    const std::string rp = jsonPath("allocations.rows", x);
    const nlohmann::json& row = rowAt(*rows, x, rp, kAllocationColumns.size(), r);
    auto cell = [&](size_t c) -> const nlohmann::json& { return row[pos[c]]; };
    auto path = [&](size_t c) { return jsonPath(rp, pos[c]); };
    AllocationRecord rec;
    rec.id = r.integer(cell(0), path(0), 0, kMax);
    rec.label = r.string(cell(1), path(1));
    rec.opId = static_cast<int32_t>(r.integer(cell(2), path(2), 0, ops - 1));
    rec.requestedBytes = r.integer(cell(3), path(3), 0, kMax);
    rec.blockBytes = r.integer(cell(4), path(4), 0, kMax);
    const std::string pool = r.string(cell(5), path(5));
    if (pool != "small" && pool != "large")
      r.fail(path(5), "is '" + pool + "' (allowed: small, large)");
    rec.small = pool == "small";
    if (!cell(6).is_null()) {
      const auto frame = static_cast<size_t>(
          r.integer(cell(6), path(6), 0, static_cast<int64_t>(frames.size()) - 1));
      rec.label += " at " + frameText(frames, frame, r);
    }
    rec.alive = r.boolean(cell(7), path(7));
    t.records.push_back(std::move(rec));
  }
}

/// kept_alive_by: {"<id>": [{"why", "count"}]} -> aliveWhy, the reasons joined by "; ".
void readKeptAlive(const nlohmann::json& doc, const JsonReader& r, MemoryTimeline& t) {
  if (!doc.contains("kept_alive_by")) return;
  const nlohmann::json& kept = r.object(doc["kept_alive_by"], "kept_alive_by");
  for (auto it = kept.begin(); it != kept.end(); ++it) {
    const std::string at = jsonPath("kept_alive_by", it.key());
    int64_t id = -1;
    try {
      size_t used = 0;
      id = std::stoll(it.key(), &used);
      if (used != it.key().size() || id < 0) id = -1;
    } catch (const std::exception&) {
    }
    if (id < 0) r.fail(at, "is not an allocation id");
    std::string why;
    const nlohmann::json& reasons = r.array(it.value(), at);
    for (size_t x = 0; x < reasons.size(); ++x) {
      const nlohmann::json& reason = r.object(reasons[x], jsonPath(at, x));
      why += (why.empty() ? "" : "; ") +
             r.string(r.member(reason, jsonPath(at, x), "why"), jsonPath(jsonPath(at, x), "why"));
    }
    t.aliveWhy[id] = why;
  }
}

void readEvents(const nlohmann::json& doc, const JsonReader& r, MemoryTimeline& t) {
  const auto found = table(doc, "events", kEventColumns, r);
  const nlohmann::json* rows = found.first;
  const auto& pos = found.second;
  std::unordered_map<int64_t, size_t> recordOf;
  for (size_t x = 0; x < t.records.size(); ++x) recordOf[t.records[x].id] = x;
  const auto ops = static_cast<int64_t>(t.opNames.size());
  int64_t requested = 0;
  t.events.reserve(rows->size());
  for (size_t x = 0; x < rows->size(); ++x) {
    const std::string rp = jsonPath("events.rows", x);
    const nlohmann::json& row = rowAt(*rows, x, rp, kEventColumns.size(), r);
    auto num = [&](size_t c, int64_t lo, int64_t hi) {
      return r.integer(row[pos[c]], jsonPath(rp, pos[c]), lo, hi);
    };
    MemoryEvent ev{};
    ev.kind = kEventKinds[static_cast<size_t>(num(0, 0, int64_t{kEventKinds.size()} - 1))];
    ev.allocationId = num(1, -1, kMax);
    ev.bytes = num(2, 0, kMax);
    ev.timeUs = r.number(row[pos[3]], jsonPath(rp, pos[3]));
    ev.after.allocatedBytes = num(4, 0, kMax);
    ev.after.reservedBytes = num(5, 0, kMax);
    ev.opId = static_cast<int32_t>(num(6, 0, ops - 1));
    const auto rec = recordOf.find(ev.allocationId);
    if (ev.allocationId >= 0 && rec == recordOf.end())
      r.fail(jsonPath(rp, pos[1]), "names allocation " + std::to_string(ev.allocationId) +
                                       ", which 'allocations' does not list");
    if (rec != recordOf.end() && ev.kind == MemoryEventKind::Alloc)
      requested = addSaturating(requested, t.records[rec->second].requestedBytes);
    if (rec != recordOf.end() && ev.kind == MemoryEventKind::Free)
      requested = subSaturating(requested, t.records[rec->second].requestedBytes);
    ev.after.requestedBytes = std::max<int64_t>(0, requested);
    t.events.push_back(ev);
  }
}

}  // namespace

PythonRun readPythonRun(const nlohmann::json& doc, const JsonReader& r,
                        std::vector<std::string>& ignored) {
  static constexpr std::array known{"format",      "version",       "kind",  "script",
                                    "argv",        "complete",      "error", "memory_stats",
                                    "device",      "frames",        "ops",   "events",
                                    "allocations", "kept_alive_by", "peak",  "marks"};
  for (auto it = doc.begin(); it != doc.end(); ++it)
    if (std::find(known.begin(), known.end(), it.key()) == known.end()) ignored.push_back(it.key());
  PythonRun run;
  if (doc.contains("script") && !doc["script"].is_null())
    run.script = r.string(doc["script"], "script");
  if (doc.contains("complete")) run.complete = r.boolean(doc["complete"], "complete");
  if (doc.contains("error") && !doc["error"].is_null()) run.error = r.string(doc["error"], "error");
  const nlohmann::json& ops = r.array(r.member(doc, "", "ops"), "ops");
  for (size_t x = 0; x < ops.size(); ++x)
    run.timeline.opNames.push_back(r.string(ops[x], jsonPath("ops", x)));
  readAllocations(doc, r, run.timeline);
  readKeptAlive(doc, r, run.timeline);
  readEvents(doc, r, run.timeline);
  return run;
}

}  // namespace matmulviz
