#include "core/report/python_report.h"

#include "core/report/json_reader.h"
#include "core/report/report_load.h"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <limits>
#include <sstream>

namespace matmulviz {

namespace {

constexpr int64_t kAnyInt64 = std::numeric_limits<int64_t>::max();
constexpr int64_t kMaxIndex = std::numeric_limits<int32_t>::max();

/// A table of the report ({"columns": [...], "rows": [[...], ...]}): where each column this
/// reader needs sits in a row.
class Table {
 public:
  Table(const JsonReader& r, const nlohmann::json& table, const std::string& path,
        std::initializer_list<const char*> needed)
      : r_(r), path_(path) {
    const nlohmann::json& columns = r.array(r.member(table, path, "columns"), path + ".columns");
    for (const char* name : needed) {
      const auto it = std::find(columns.begin(), columns.end(), name);
      if (it == columns.end())
        r.fail(path + ".columns", std::string("has no column '") + name + "'");
      index_.push_back(static_cast<size_t>(it - columns.begin()));
    }
    width_ = columns.size();
    columns_ = &columns;
    rows_ = &r.array(r.member(table, path, "rows"), path + ".rows");
  }
  size_t size() const { return rows_->size(); }
  /// Row `i`, checked to be an array with a value for each column.
  const nlohmann::json& row(size_t i) const {
    const nlohmann::json& row = r_.array((*rows_)[i], rowPath(i));
    if (row.size() < width_)
      r_.fail(rowPath(i), "has " + std::to_string(row.size()) + " values; the columns name " +
                              std::to_string(width_));
    return row;
  }
  /// The value of needed column `column` (its position in `needed`) in `row`, and its path.
  const nlohmann::json& at(const nlohmann::json& row, size_t column) const {
    return row[index_[column]];
  }
  /// The value of the optional column `name` in `row` and its path; nullptr when the table has
  /// no such column.
  const nlohmann::json* optional(const nlohmann::json& row, size_t i, const char* name,
                                 std::string& path) const {
    const auto it = std::find(columns_->begin(), columns_->end(), name);
    if (it == columns_->end()) return nullptr;
    const size_t at = static_cast<size_t>(it - columns_->begin());
    path = jsonPath(rowPath(i), at);
    return &row[at];
  }
  /// The position in a row of needed column `column`.
  size_t column(size_t column) const { return index_[column]; }
  std::string path(size_t i, size_t column) const { return jsonPath(rowPath(i), index_[column]); }

 private:
  std::string rowPath(size_t i) const { return jsonPath(path_ + ".rows", i); }
  const JsonReader& r_;
  std::string path_;
  std::vector<size_t> index_;
  size_t width_ = 0;
  const nlohmann::json* columns_ = nullptr;
  const nlohmann::json* rows_ = nullptr;
};

class PythonReportReader {
 public:
  explicit PythonReportReader(const std::string& file) : r_(file) {}
  PythonReport read(const nlohmann::json& doc);

 private:
  void header(const nlohmann::json& doc, PythonReport& out) const;
  void device(const nlohmann::json& d, PythonReport& out) const;
  void frames(const nlohmann::json& j, PythonReport& out) const;
  void events(const nlohmann::json& j, PythonReport& out) const;
  void allocations(const nlohmann::json& j, PythonReport& out) const;
  std::map<int64_t, std::vector<PythonHolder>> holders(const nlohmann::json& j,
                                                       const std::string& path) const;
  void peak(const nlohmann::json& j, PythonReport& out) const;
  void variables(const nlohmann::json& j, PythonReport& out) const;
  void marks(const nlohmann::json& j, PythonReport& out) const;
  void torch(const nlohmann::json& j, PythonReport& out) const;
  void valueReads(const nlohmann::json& j, PythonReport& out) const;
  void pinnedHost(const nlohmann::json& j, PythonReport& out) const;
  /// Refuses an event that names an allocation the allocations table does not list.
  void checkEventAllocations(const PythonReport& out) const;
  void noteUnknown(const nlohmann::json& object, const std::string& path,
                   std::initializer_list<const char*> known);
  /// An object's key that must be an allocation id ("17").
  int64_t idKey(const std::string& key, const std::string& path) const {
    int64_t id = -1;
    std::istringstream in(key);
    if (!(in >> id) || !in.eof() || id < 0) r_.fail(path, "is not an allocation id");
    return id;
  }
  int64_t index(const nlohmann::json& v, const std::string& path, size_t count) const {
    if (count == 0) r_.fail(path, "refers to an empty list");
    return r_.integer(v, path, 0, std::min<int64_t>(kMaxIndex, int64_t(count) - 1));
  }

  JsonReader r_;
  std::vector<std::string> ignored_;
  mutable size_t eventIdColumn_ = 1;  ///< where an event row holds its allocation id
};

void PythonReportReader::noteUnknown(const nlohmann::json& object, const std::string& path,
                                     std::initializer_list<const char*> known) {
  for (auto it = object.begin(); it != object.end(); ++it)
    if (std::none_of(known.begin(), known.end(), [&](const char* k) { return it.key() == k; }))
      ignored_.push_back(jsonPath(path, it.key()));
}

void PythonReportReader::header(const nlohmann::json& doc, PythonReport& out) const {
  if (doc.contains("script") && !doc["script"].is_null())
    out.script = r_.string(doc["script"], "script");
  if (doc.contains("argv")) {
    const nlohmann::json& argv = r_.array(doc["argv"], "argv");
    for (size_t i = 0; i < argv.size(); ++i)
      out.argv.push_back(r_.string(argv[i], jsonPath("argv", i)));
  }
  if (doc.contains("complete")) out.complete = r_.boolean(doc["complete"], "complete");
  if (doc.contains("error") && !doc["error"].is_null())
    out.error = r_.string(doc["error"], "error");
  if (doc.contains("memory_stats")) {
    const nlohmann::json& stats = r_.object(doc["memory_stats"], "memory_stats");
    for (auto it = stats.begin(); it != stats.end(); ++it)  // max_split_size -1: unlimited
      out.memoryStats[it.key()] = r_.integer(it.value(), jsonPath("memory_stats", it.key()),
                                             it.key() == "max_split_size" ? -1 : 0, kAnyInt64);
  }
}

void PythonReportReader::device(const nlohmann::json& d, PythonReport& out) const {
  r_.object(d, "device");
  if (d.contains("name")) out.deviceName = r_.string(d["name"], "device.name");
  if (d.contains("mode")) out.deviceMode = r_.string(d["mode"], "device.mode");
  if (d.contains("capacity_bytes") && !d["capacity_bytes"].is_null())
    out.capacityBytes = r_.integer(d["capacity_bytes"], "device.capacity_bytes", 0, kAnyInt64);
}

void PythonReportReader::frames(const nlohmann::json& j, PythonReport& out) const {
  r_.array(j, "frames");
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string path = jsonPath("frames", i);
    const nlohmann::json& f = r_.object(j[i], path);
    PythonFrame frame;
    frame.file = r_.string(r_.member(f, path, "file"), jsonPath(path, "file"));
    frame.line = r_.integer(r_.member(f, path, "line"), jsonPath(path, "line"), 0, kMaxIndex);
    frame.function = r_.string(r_.member(f, path, "function"), jsonPath(path, "function"));
    if (f.contains("code")) frame.code = r_.string(f["code"], jsonPath(path, "code"));
    out.frames.push_back(std::move(frame));
  }
}

/// The event kinds of the report, by name, as MemoryEventKind.
std::vector<MemoryEventKind> eventKinds(const JsonReader& r, const nlohmann::json& events) {
  static constexpr std::array<MemoryEventKind, 5> kAll{
      MemoryEventKind::Alloc, MemoryEventKind::Free, MemoryEventKind::SegmentAlloc,
      MemoryEventKind::SegmentFree, MemoryEventKind::Oom};
  const nlohmann::json& names = r.array(r.member(events, "events", "kinds"), "events.kinds");
  std::vector<MemoryEventKind> kinds;
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string name = r.string(names[i], jsonPath("events.kinds", i));
    const auto it = std::find_if(kAll.begin(), kAll.end(),
                                 [&](MemoryEventKind k) { return name == memoryEventKindName(k); });
    if (it == kAll.end())
      r.fail(jsonPath("events.kinds", i),
             "is '" + name + "' (allowed: alloc, free, segment_alloc, segment_free, oom)");
    kinds.push_back(*it);
  }
  return kinds;
}

void PythonReportReader::events(const nlohmann::json& j, PythonReport& out) const {
  r_.object(j, "events");
  const std::vector<MemoryEventKind> kinds = eventKinds(r_, j);
  const Table t(r_, j, "events", {"kind", "id", "bytes", "time_us", "allocated", "reserved", "op"});
  eventIdColumn_ = t.column(1);
  out.events.reserve(t.size());
  for (size_t i = 0; i < t.size(); ++i) {
    const nlohmann::json& row = t.row(i);
    MemoryEvent e{};
    e.kind = kinds[index(t.at(row, 0), t.path(i, 0), kinds.size())];
    e.allocationId = r_.integer(t.at(row, 1), t.path(i, 1), -1, kAnyInt64);
    e.bytes = r_.integer(t.at(row, 2), t.path(i, 2), 0, kAnyInt64);
    e.timeUs = r_.number(t.at(row, 3), t.path(i, 3));
    if (e.timeUs < 0) r_.fail(t.path(i, 3), "is negative");
    e.after.allocatedBytes = r_.integer(t.at(row, 4), t.path(i, 4), 0, kAnyInt64);
    e.after.reservedBytes = r_.integer(t.at(row, 5), t.path(i, 5), 0, kAnyInt64);
    e.opId = static_cast<int32_t>(index(t.at(row, 6), t.path(i, 6), out.ops.size()));
    out.events.push_back(e);
  }
}

void PythonReportReader::allocations(const nlohmann::json& j, PythonReport& out) const {
  r_.object(j, "allocations");
  const Table t(r_, j, "allocations",
                {"id", "label", "op", "requested_bytes", "block_bytes", "pool", "frame", "alive"});
  out.allocations.reserve(t.size());
  for (size_t i = 0; i < t.size(); ++i) {
    const nlohmann::json& row = t.row(i);
    PythonAllocation a;
    a.id = r_.integer(t.at(row, 0), t.path(i, 0), 0, kAnyInt64);
    a.label = r_.string(t.at(row, 1), t.path(i, 1));
    a.op = static_cast<int32_t>(index(t.at(row, 2), t.path(i, 2), out.ops.size()));
    a.requestedBytes = r_.integer(t.at(row, 3), t.path(i, 3), 0, kAnyInt64);
    a.blockBytes = r_.integer(t.at(row, 4), t.path(i, 4), 0, kAnyInt64);
    const std::string pool = r_.string(t.at(row, 5), t.path(i, 5));
    if (pool != "small" && pool != "large")
      r_.fail(t.path(i, 5), "is '" + pool + "' (allowed: small, large)");
    a.small = pool == "small";
    if (!t.at(row, 6).is_null())
      a.frame = static_cast<int32_t>(index(t.at(row, 6), t.path(i, 6), out.frames.size()));
    a.alive = r_.boolean(t.at(row, 7), t.path(i, 7));
    std::string path;
    if (const nlohmann::json* c = t.optional(row, i, "category", path)) {
      const std::string name = r_.string(*c, path);
      const auto category = memoryCategoryFromName(name);
      if (!category)
        r_.fail(path, "is '" + name +
                          "', not a memory category (inputs, gathered copy, outputs, saved for "
                          "backward, gradients, other)");
      a.category = *category;
    }
    out.allocations.push_back(std::move(a));
  }
  std::sort(out.allocations.begin(), out.allocations.end(),
            [](const PythonAllocation& x, const PythonAllocation& y) { return x.id < y.id; });
}

std::map<int64_t, std::vector<PythonHolder>> PythonReportReader::holders(
    const nlohmann::json& j, const std::string& path) const {
  std::map<int64_t, std::vector<PythonHolder>> out;
  r_.object(j, path);
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string key = jsonPath(path, it.key());
    const int64_t id = idKey(it.key(), key);
    const nlohmann::json& list = r_.array(it.value(), key);
    for (size_t x = 0; x < list.size(); ++x) {
      const std::string p = jsonPath(key, x);
      const nlohmann::json& h = r_.object(list[x], p);
      out[id].push_back({r_.string(r_.member(h, p, "why"), jsonPath(p, "why")),
                         r_.integer(r_.member(h, p, "count"), jsonPath(p, "count"), 1, kAnyInt64)});
    }
  }
  return out;
}

void PythonReportReader::peak(const nlohmann::json& j, PythonReport& out) const {
  if (j.is_null()) return;
  r_.object(j, "peak");
  PythonPeak p;
  p.allocatedBytes =
      r_.integer(r_.member(j, "peak", "allocated_bytes"), "peak.allocated_bytes", 0, kAnyInt64);
  p.event =
      static_cast<size_t>(index(r_.member(j, "peak", "event"), "peak.event", out.events.size()));
  p.timeUs = r_.number(r_.member(j, "peak", "time_us"), "peak.time_us");
  const nlohmann::json& live = r_.array(r_.member(j, "peak", "live"), "peak.live");
  for (size_t i = 0; i < live.size(); ++i)
    p.live.push_back(r_.integer(live[i], jsonPath("peak.live", i), 0, kAnyInt64));
  std::sort(p.live.begin(), p.live.end());
  if (j.contains("kept_alive_by"))
    out.keptAliveAtPeak = holders(j["kept_alive_by"], "peak.kept_alive_by");
  out.peak = std::move(p);
}

void PythonReportReader::variables(const nlohmann::json& j, PythonReport& out) const {
  r_.object(j, "variables");
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string key = jsonPath("variables", it.key());
    const int64_t id = idKey(it.key(), key);
    const nlohmann::json& names = r_.array(it.value(), key);
    for (size_t x = 0; x < names.size(); ++x)
      out.variables[id].push_back(r_.string(names[x], jsonPath(key, x)));
  }
}

void PythonReportReader::marks(const nlohmann::json& j, PythonReport& out) const {
  r_.array(j, "marks");
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string path = jsonPath("marks", i);
    const nlohmann::json& m = r_.object(j[i], path);
    PythonMark mark;
    mark.timeUs = r_.number(r_.member(m, path, "time_us"), jsonPath(path, "time_us"));
    mark.name = r_.string(r_.member(m, path, "name"), jsonPath(path, "name"));
    if (m.contains("event"))  // optional: reports written before it have none
      mark.event = r_.integer(m["event"], jsonPath(path, "event"), 0, int64_t(out.events.size()));
    out.marks.push_back(std::move(mark));
  }
}

void PythonReportReader::torch(const nlohmann::json& j, PythonReport& out) const {
  const nlohmann::json& t = r_.object(j, "torch");
  PythonTorch torch;
  torch.version = r_.string(r_.member(t, "torch", "version"), "torch.version");
  torch.cudaBranches = r_.boolean(r_.member(t, "torch", "cuda_branches"), "torch.cuda_branches");
  out.torch = std::move(torch);
}

void PythonReportReader::valueReads(const nlohmann::json& j, PythonReport& out) const {
  r_.array(j, "value_reads");
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string path = jsonPath("value_reads", i);
    const nlohmann::json& v = r_.object(j[i], path);
    auto text = [&](const char* key) {
      return r_.string(r_.member(v, path, key), jsonPath(path, key));
    };
    PythonValueRead read;
    read.file = text("file");
    read.line = r_.integer(r_.member(v, path, "line"), jsonPath(path, "line"), 0, kAnyInt64);
    read.code = text("code");
    read.read = text("read");
    read.count = r_.integer(r_.member(v, path, "count"), jsonPath(path, "count"), 1, kAnyInt64);
    read.returned = text("returned");
    out.valueReads.push_back(std::move(read));
  }
}

void PythonReportReader::pinnedHost(const nlohmann::json& j, PythonReport& out) const {
  const nlohmann::json& p = r_.object(j, "pinned_host");
  auto bytes = [&](const char* key) {
    return r_.integer(r_.member(p, "pinned_host", key), jsonPath("pinned_host", key), 0, kAnyInt64);
  };
  PythonPinnedHost pinned;
  pinned.peakActiveBytes = bytes("peak_active_bytes");
  pinned.peakHeldBytes = bytes("peak_held_bytes");
  pinned.pinnedTensors = bytes("pinned_tensors");
  out.pinnedHost = pinned;
}

void PythonReportReader::checkEventAllocations(const PythonReport& out) const {
  for (size_t i = 0; i < out.events.size(); ++i) {
    const int64_t id = out.events[i].allocationId;
    if (id >= 0 && !out.allocation(id))
      r_.fail(jsonPath(jsonPath("events.rows", i), eventIdColumn_),
              "names allocation " + std::to_string(id) + ", which 'allocations' does not list");
  }
}

PythonReport PythonReportReader::read(const nlohmann::json& doc) {
  const std::string kind = reportKind(doc, r_.file());
  if (kind != "python")
    r_.fail("", "is a report of kind '" + kind + "', not of a Python run (kind 'python')");
  noteUnknown(doc, "", {"format",   "version", "kind",      "script",       "argv",
                        "complete", "error",   "variables", "memory_stats", "device",
                        "frames",   "ops",     "events",    "allocations",  "kept_alive_by",
                        "peak",     "marks",   "torch",     "value_reads",  "pinned_host"});
  PythonReport out;
  header(doc, out);
  if (doc.contains("frames")) frames(doc["frames"], out);
  const nlohmann::json& ops = r_.array(r_.member(doc, "", "ops"), "ops");
  for (size_t i = 0; i < ops.size(); ++i) out.ops.push_back(r_.string(ops[i], jsonPath("ops", i)));
  events(r_.member(doc, "", "events"), out);
  allocations(r_.member(doc, "", "allocations"), out);
  if (doc.contains("device")) device(doc["device"], out);
  if (doc.contains("kept_alive_by"))
    out.keptAliveBy = holders(doc["kept_alive_by"], "kept_alive_by");
  checkEventAllocations(out);
  if (doc.contains("peak")) peak(doc["peak"], out);
  if (doc.contains("marks")) marks(doc["marks"], out);
  if (doc.contains("variables")) variables(doc["variables"], out);
  if (doc.contains("torch")) torch(doc["torch"], out);
  if (doc.contains("value_reads")) valueReads(doc["value_reads"], out);
  if (doc.contains("pinned_host")) pinnedHost(doc["pinned_host"], out);
  out.ignored = std::move(ignored_);
  return out;
}

}  // namespace

const PythonAllocation* PythonReport::allocation(int64_t id) const {
  const auto it =
      std::lower_bound(allocations.begin(), allocations.end(), id,
                       [](const PythonAllocation& a, int64_t value) { return a.id < value; });
  return it != allocations.end() && it->id == id ? &*it : nullptr;
}

PythonReport readPythonReport(const nlohmann::json& doc, const std::string& file) {
  return PythonReportReader(file).read(doc);
}

PythonReport parsePythonReport(const std::string& text, const std::string& file) {
  return readPythonReport(parseReportJson(text, file), file);
}

PythonReport readPythonReportFile(const std::string& path) {
  std::string name;
  const std::string text = readReportText(path, name);
  return parsePythonReport(text, name);
}

}  // namespace matmulviz
