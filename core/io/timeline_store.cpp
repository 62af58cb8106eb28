#include "core/io/timeline_store.h"

#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace matmulviz::store {

namespace {

template <class T>
T get(const uint8_t*& p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  p += sizeof v;
  return v;
}

/// A prepared statement, finalized when it goes out of scope.
class Query {
 public:
  Query(sqlite3* db, const std::string& path, const char* sql) : db_(db), path_(path) {
    if (sqlite3_prepare_v2(db, sql, -1, &s_, nullptr) != SQLITE_OK) fail();
  }
  ~Query() { sqlite3_finalize(s_); }
  Query& bind(int i, int64_t v) {
    sqlite3_bind_int64(s_, i, v);
    return *this;
  }
  Query& bind(int i, double v) {
    sqlite3_bind_double(s_, i, v);
    return *this;
  }
  /// True while there is a row.
  bool step() {
    const int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) fail();
    return false;
  }
  int64_t integer(int col) const { return sqlite3_column_int64(s_, col); }
  double real(int col) const { return sqlite3_column_double(s_, col); }
  std::string text(int col) const {
    const auto* t = sqlite3_column_text(s_, col);
    return t ? reinterpret_cast<const char*>(t) : "";
  }
  std::pair<const uint8_t*, size_t> blob(int col) const {
    const auto* p = static_cast<const uint8_t*>(sqlite3_column_blob(s_, col));
    return {p, size_t(sqlite3_column_bytes(s_, col))};
  }

 private:
  [[noreturn]] void fail() const { throw StoreError("'" + path_ + "': " + sqlite3_errmsg(db_)); }
  sqlite3* db_;
  const std::string& path_;
  sqlite3_stmt* s_ = nullptr;
};

}  // namespace

std::vector<StoredEvent> decodeEvents(const uint8_t* data, size_t bytes) {
  std::vector<StoredEvent> out(bytes / kEventBytes);
  for (StoredEvent& e : out) {
    e.timeUs = get<double>(data);
    e.addr = get<int64_t>(data);
    e.bytes = get<int64_t>(data);
    e.allocated = get<int64_t>(data);
    e.requested = get<int64_t>(data);
    e.reserved = get<int64_t>(data);
    e.stack = get<uint32_t>(data);
    e.kind = get<uint8_t>(data);
  }
  return out;
}

TimelineStore::TimelineStore(const std::string& path, bool removeWhenClosed)
    : path_(path), remove_(removeWhenClosed) {
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    const std::string what = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    throw StoreError("'" + path + "': cannot open the timeline store: " + what);
  }
  sqlite3_exec(db_, "PRAGMA cache_size=-32768", nullptr, nullptr, nullptr);
  try {
    Query q(db_, path_,
            "SELECT id, name, events, peak_allocated, peak_index, max_reserved, end_us, levels, "
            "recording_start "
            "FROM devices ORDER BY id");
    while (q.step())
      devices_.push_back({q.integer(0), q.text(1), q.integer(2), q.integer(3), q.integer(4),
                          q.integer(5), q.real(6), int(q.integer(7)), q.integer(8)});
  } catch (const StoreError&) {
    sqlite3_close(db_);
    throw StoreError("'" + path + "': not a matmulviz timeline store");
  }
}

TimelineStore::~TimelineStore() {
  sqlite3_close(db_);
  if (remove_) std::remove(path_.c_str());
}

TimelineStore::Chunk TimelineStore::chunk(int64_t device, int64_t chunk) const {
  const int64_t id = (device << 32) | chunk;
  for (auto it = cache_.begin(); it != cache_.end(); ++it)
    if (it->first == id) {
      cache_.splice(cache_.begin(), cache_, it);
      return it->second;
    }
  Query q(db_, path_, "SELECT data FROM chunks WHERE id = ?");
  q.bind(1, id);
  Chunk c;
  if (q.step()) {
    const auto [data, bytes] = q.blob(0);
    c = std::make_shared<const std::vector<StoredEvent>>(decodeEvents(data, bytes));
  } else {
    c = std::make_shared<const std::vector<StoredEvent>>();
  }
  cache_.emplace_front(id, c);
  if (cache_.size() > kCachedChunks) cache_.pop_back();
  return c;
}

void TimelineStore::forEachEvent(int64_t device, int64_t first, int64_t last,
                                 const std::function<void(int64_t, const StoredEvent&)>& f) const {
  if (first < 0 || last < first || device < 0) return;
  for (int64_t c = first / kChunkEvents; c <= last / kChunkEvents; ++c) {
    const Chunk events = chunk(device, c);
    const int64_t start = c * kChunkEvents;
    const int64_t from = std::max(first, start) - start;
    const int64_t to = std::min<int64_t>(last - start, int64_t(events->size()) - 1);
    for (int64_t i = from; i <= to; ++i) f(start + i, (*events)[size_t(i)]);
    if (int64_t(events->size()) < kChunkEvents) return;  // the device's last chunk
  }
}

std::vector<StoredEvent> TimelineStore::events(int64_t device, int64_t first, int64_t count) const {
  std::vector<StoredEvent> out;
  if (count <= 0) return out;
  forEachEvent(device, first, first + count - 1,
               [&](int64_t, const StoredEvent& e) { out.push_back(e); });
  return out;
}

std::vector<Bucket> TimelineStore::level(int64_t device, int level, int64_t first,
                                         int64_t last) const {
  int64_t size = kFinestBucket;
  for (int l = 0; l < level; ++l) size *= kLevelFactor;
  int64_t events = 0;
  for (const DeviceInfo& d : devices_)
    if (d.id == device) events = d.events;
  Query q(db_, path_,
          "SELECT bucket, alloc_min, alloc_max, req_min, req_max, res_min, res_max FROM lod "
          "WHERE device = ? AND level = ? AND bucket BETWEEN ? AND ? ORDER BY bucket");
  q.bind(1, device).bind(2, int64_t(level)).bind(3, std::max<int64_t>(0, first) / size);
  q.bind(4, std::max<int64_t>(0, last) / size);
  std::vector<Bucket> out;
  while (q.step()) {
    const int64_t b0 = q.integer(0) * size;
    out.push_back({b0, std::min(b0 + size, events) - 1, q.integer(1), q.integer(2), q.integer(3),
                   q.integer(4), q.integer(5), q.integer(6)});
  }
  return out;
}

std::vector<Bucket> TimelineStore::columns(int64_t device, double x0, double x1, int pixels) const {
  const auto d = std::find_if(devices_.begin(), devices_.end(),
                              [&](const DeviceInfo& i) { return i.id == device; });
  std::vector<Bucket> out;
  if (d == devices_.end() || pixels <= 0 || d->events == 0) return out;
  x0 = std::max(0.0, x0);
  x1 = std::min(double(d->events), x1);
  if (!(x1 > x0)) return out;
  const double perPixel = (x1 - x0) / pixels;
  int lod = -1;
  for (int64_t size = kFinestBucket; size <= perPixel && lod + 1 < d->levels; size *= kLevelFactor)
    ++lod;
  const auto first = int64_t(std::floor(x0)), last = int64_t(std::ceil(x1)) - 1;
  int64_t column = -1;
  auto add = [&](const Bucket& b) {
    const auto c = std::clamp<int64_t>(int64_t((double(b.first) - x0) / perPixel), 0, pixels - 1);
    if (c != column) {
      out.push_back(b);
      column = c;
    } else {
      mergeBucket(out.back(), b);
    }
  };
  if (lod < 0) {
    forEachEvent(device, first, last, [&](int64_t x, const StoredEvent& e) {
      add({x, x, e.allocated, e.allocated, e.requested, e.requested, e.reserved, e.reserved});
    });
  } else {
    for (const Bucket& b : level(device, lod, first, last)) add(b);
  }
  return out;
}

int64_t TimelineStore::indexAtTime(int64_t device, double timeUs) const {
  Query q(db_, path_,
          "SELECT id, data FROM chunks WHERE id BETWEEN ? AND ? AND last_us >= ? ORDER BY id "
          "LIMIT 1");
  q.bind(1, device << 32).bind(2, (device << 32) | 0xffffffff).bind(3, timeUs);
  if (!q.step()) {
    for (const DeviceInfo& d : devices_)
      if (d.id == device) return d.events;
    return 0;
  }
  const int64_t start = (q.integer(0) & 0xffffffff) * kChunkEvents;
  const auto [data, bytes] = q.blob(1);
  const std::vector<StoredEvent> chunk = decodeEvents(data, bytes);
  for (size_t i = 0; i < chunk.size(); ++i)
    if (chunk[i].timeUs >= timeUs) return start + int64_t(i);
  return start + int64_t(chunk.size());
}

std::pair<std::string, std::string> TimelineStore::stack(uint32_t id) const {
  Query q(db_, path_, "SELECT label, function FROM stacks WHERE id = ?");
  q.bind(1, int64_t(id));
  if (!q.step()) return {};
  return {q.text(0), q.text(1)};
}

void mergeBucket(Bucket& into, const Bucket& b) {
  if (into.first > into.last) {
    into = b;
    return;
  }
  into.first = std::min(into.first, b.first);
  into.last = std::max(into.last, b.last);
  into.allocMin = std::min(into.allocMin, b.allocMin);
  into.allocMax = std::max(into.allocMax, b.allocMax);
  into.reqMin = std::min(into.reqMin, b.reqMin);
  into.reqMax = std::max(into.reqMax, b.reqMax);
  into.resMin = std::min(into.resMin, b.resMin);
  into.resMax = std::max(into.resMax, b.resMax);
}

}  // namespace matmulviz::store
