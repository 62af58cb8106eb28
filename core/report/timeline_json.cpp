#include "core/report/timeline_json.h"

#include <array>
#include <limits>
#include <unordered_set>

namespace matmulviz {

namespace {

constexpr std::array kEventColumns{"kind",      "id",        "bytes",    "time_us",
                                   "allocated", "requested", "reserved", "op"};
constexpr std::array kAllocationColumns{
    "id", "label", "op", "requested_bytes", "block_bytes", "pool", "category", "alive", "why"};
constexpr std::array kEventKinds{MemoryEventKind::Alloc, MemoryEventKind::Free,
                                 MemoryEventKind::SegmentAlloc, MemoryEventKind::SegmentFree,
                                 MemoryEventKind::Oom};
constexpr int64_t kMaxBytes = std::numeric_limits<int64_t>::max();

template <size_t N>
nlohmann::ordered_json names(const std::array<const char*, N>& columns) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const char* c : columns) j.push_back(c);
  return j;
}

/// For each expected column, its position in the table's "columns" (extra columns are allowed
/// and ignored, so a later writer may add some).
template <size_t N>
std::array<size_t, N> columnPositions(const nlohmann::json& table, const std::string& path,
                                      const std::array<const char*, N>& expected,
                                      const JsonReader& r) {
  const std::string at = jsonPath(path, "columns");
  const nlohmann::json& columns = r.array(r.member(table, path, "columns"), at);
  std::array<size_t, N> pos{};
  for (size_t c = 0; c < N; ++c) {
    size_t found = columns.size();
    for (size_t x = 0; x < columns.size(); ++x)
      if (columns[x].is_string() && columns[x].get<std::string>() == expected[c]) found = x;
    if (found == columns.size()) r.fail(at, std::string("has no column '") + expected[c] + "'");
    pos[c] = found;
  }
  return pos;
}

/// `row` as an array at least `width` wide.
const nlohmann::json& rowOf(const nlohmann::json& row, const std::string& path, size_t width,
                            const JsonReader& r) {
  r.array(row, path);
  if (row.size() < width)
    r.fail(path, "has " + std::to_string(row.size()) + " values; the columns name " +
                     std::to_string(width));
  return row;
}

MemoryCategory parseCategory(const std::string& name, const std::string& path,
                             const JsonReader& r) {
  if (const auto c = memoryCategoryFromName(name)) return *c;
  r.fail(path, "is '" + name +
                   "', not a memory category (inputs, gathered copy, outputs, saved "
                   "for backward, gradients, other)");
}

void readAllocations(const nlohmann::json& j, const std::string& path, const JsonReader& r,
                     MemoryTimeline& t) {
  const nlohmann::json& table = r.member(j, path, "allocations");
  const std::string at = jsonPath(path, "allocations");
  const auto pos = columnPositions(table, at, kAllocationColumns, r);
  const std::string rowsAt = jsonPath(at, "rows");
  const nlohmann::json& rows = r.array(r.member(table, at, "rows"), rowsAt);
  const auto ops = static_cast<int64_t>(t.opNames.size());
  for (size_t x = 0; x < rows.size(); ++x) {
    const std::string rp = jsonPath(rowsAt, x);
    const nlohmann::json& row = rowOf(rows[x], rp, kAllocationColumns.size(), r);
    auto cell = [&](size_t c) -> std::pair<const nlohmann::json&, std::string> {
      return {row[pos[c]], jsonPath(rp, pos[c])};
    };
    AllocationRecord rec;
    rec.id = r.integer(cell(0).first, cell(0).second, 0, kMaxBytes);
    rec.label = r.string(cell(1).first, cell(1).second);
    rec.opId = static_cast<int32_t>(r.integer(cell(2).first, cell(2).second, 0, ops - 1));
    rec.requestedBytes = r.integer(cell(3).first, cell(3).second, 0, kMaxBytes);
    rec.blockBytes = r.integer(cell(4).first, cell(4).second, 0, kMaxBytes);
    const std::string pool = r.string(cell(5).first, cell(5).second);
    if (pool != "small" && pool != "large")
      r.fail(cell(5).second, "is '" + pool + "' (allowed: small, large)");
    rec.small = pool == "small";
    rec.category = parseCategory(r.string(cell(6).first, cell(6).second), cell(6).second, r);
    rec.alive = r.boolean(cell(7).first, cell(7).second);
    const nlohmann::json& why = cell(8).first;
    if (!why.is_null()) t.aliveWhy[rec.id] = r.string(why, cell(8).second);
    t.records.push_back(std::move(rec));
  }
}

void readEvents(const nlohmann::json& j, const std::string& path, const JsonReader& r,
                MemoryTimeline& t) {
  const nlohmann::json& table = r.member(j, path, "events");
  const std::string at = jsonPath(path, "events");
  const auto pos = columnPositions(table, at, kEventColumns, r);
  const std::string kindsAt = jsonPath(at, "kinds");
  const nlohmann::json& kindNames = r.array(r.member(table, at, "kinds"), kindsAt);
  std::vector<MemoryEventKind> kinds;
  for (size_t k = 0; k < kindNames.size(); ++k) {
    const std::string name = r.string(kindNames[k], jsonPath(kindsAt, k));
    size_t found = kEventKinds.size();
    for (size_t e = 0; e < kEventKinds.size(); ++e)
      if (name == memoryEventKindName(kEventKinds[e])) found = e;
    if (found == kEventKinds.size())
      r.fail(jsonPath(kindsAt, k), "is '" + name +
                                       "', not an event kind (alloc, free, "
                                       "segment_alloc, segment_free, oom)");
    kinds.push_back(kEventKinds[found]);
  }
  std::unordered_set<int64_t> ids;
  for (const AllocationRecord& rec : t.records) ids.insert(rec.id);
  const std::string rowsAt = jsonPath(at, "rows");
  const nlohmann::json& rows = r.array(r.member(table, at, "rows"), rowsAt);
  const auto ops = static_cast<int64_t>(t.opNames.size());
  t.events.reserve(rows.size());
  for (size_t x = 0; x < rows.size(); ++x) {
    const std::string rp = jsonPath(rowsAt, x);
    const nlohmann::json& row = rowOf(rows[x], rp, kEventColumns.size(), r);
    auto num = [&](size_t c, int64_t lo, int64_t hi) {
      return r.integer(row[pos[c]], jsonPath(rp, pos[c]), lo, hi);
    };
    MemoryEvent ev{};
    ev.kind = kinds.at(static_cast<size_t>(num(0, 0, static_cast<int64_t>(kinds.size()) - 1)));
    ev.allocationId = num(1, -1, kMaxBytes);
    if (ev.allocationId >= 0 && !ids.contains(ev.allocationId))
      r.fail(jsonPath(rp, pos[1]), "names allocation " + std::to_string(ev.allocationId) +
                                       ", which 'allocations' does not list");
    ev.bytes = num(2, 0, kMaxBytes);
    ev.timeUs = r.number(row[pos[3]], jsonPath(rp, pos[3]));
    ev.after.allocatedBytes = num(4, 0, kMaxBytes);
    ev.after.requestedBytes = num(5, 0, kMaxBytes);
    ev.after.reservedBytes = num(6, 0, kMaxBytes);
    ev.opId = static_cast<int32_t>(num(7, 0, ops - 1));
    t.events.push_back(ev);
  }
}

}  // namespace

nlohmann::ordered_json timelineToJson(const MemoryTimeline& t) {
  nlohmann::ordered_json j;
  j["ops"] = t.opNames;
  j["statement_end_us"] = t.statementEndUs;
  nlohmann::ordered_json kinds = nlohmann::ordered_json::array();
  for (MemoryEventKind k : kEventKinds) kinds.push_back(memoryEventKindName(k));
  nlohmann::ordered_json events = nlohmann::ordered_json::array();
  for (const MemoryEvent& e : t.events)
    events.push_back({static_cast<int>(e.kind), e.allocationId, e.bytes, e.timeUs,
                      e.after.allocatedBytes, e.after.requestedBytes, e.after.reservedBytes,
                      e.opId});
  j["events"] = {
      {"columns", names(kEventColumns)}, {"kinds", std::move(kinds)}, {"rows", std::move(events)}};
  nlohmann::ordered_json records = nlohmann::ordered_json::array();
  for (const AllocationRecord& rec : t.records) {
    const auto why = t.aliveWhy.find(rec.id);
    records.push_back(
        {rec.id, rec.label, rec.opId, rec.requestedBytes, rec.blockBytes,
         rec.small ? "small" : "large", std::string(memoryCategoryName(rec.category)), rec.alive,
         why == t.aliveWhy.end() ? nlohmann::ordered_json() : nlohmann::ordered_json(why->second)});
  }
  j["allocations"] = {{"columns", names(kAllocationColumns)}, {"rows", std::move(records)}};
  return j;
}

MemoryTimeline timelineFromJson(const nlohmann::json& j, const std::string& path,
                                const JsonReader& r) {
  MemoryTimeline t;
  r.object(j, path);
  const std::string opsAt = jsonPath(path, "ops");
  const nlohmann::json& ops = r.array(r.member(j, path, "ops"), opsAt);
  for (size_t x = 0; x < ops.size(); ++x) t.opNames.push_back(r.string(ops[x], jsonPath(opsAt, x)));
  if (j.contains("statement_end_us"))
    t.statementEndUs = r.number(j["statement_end_us"], jsonPath(path, "statement_end_us"));
  readAllocations(j, path, r, t);
  readEvents(j, path, r, t);
  return t;
}

}  // namespace matmulviz
