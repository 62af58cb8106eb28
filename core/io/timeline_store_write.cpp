#include "core/io/timeline_store.h"

#include <sqlite3.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>

namespace matmulviz::store {

static_assert(std::endian::native == std::endian::little, "chunks are stored little-endian");

namespace {

template <class T>
void put(std::vector<uint8_t>& out, T v) {
  const size_t at = out.size();
  out.resize(at + sizeof v);
  std::memcpy(out.data() + at, &v, sizeof v);
}

int64_t bucketEvents(size_t level) {
  int64_t n = kFinestBucket;
  for (size_t l = 0; l < level; ++l) n *= kLevelFactor;
  return n;
}

constexpr const char* kSchema =
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
    "INSERT INTO meta VALUES('format', 'matmulviz-timeline-store 2');"
    "CREATE TABLE devices(id INTEGER PRIMARY KEY, name TEXT, events INTEGER, "
    "peak_allocated INTEGER, peak_index INTEGER, max_reserved INTEGER, end_us REAL, "
    "levels INTEGER, recording_start INTEGER);"
    "CREATE TABLE chunks(id INTEGER PRIMARY KEY, first_us REAL, last_us REAL, data BLOB);"
    "CREATE TABLE lod(device INTEGER, level INTEGER, bucket INTEGER, alloc_min INTEGER, "
    "alloc_max INTEGER, req_min INTEGER, req_max INTEGER, res_min INTEGER, res_max INTEGER, "
    "PRIMARY KEY(device, level, bucket)) WITHOUT ROWID;"
    "CREATE TABLE stacks(id INTEGER PRIMARY KEY, label TEXT, function TEXT);";

}  // namespace

TimelineWriter::TimelineWriter(const std::string& path) : path_(path) {
  std::remove(path.c_str());
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    const std::string what = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw StoreError("'" + path + "': cannot create the timeline store: " + what);
  }
  // A scratch file written once: no journal, no fsync; large pages for the chunks' blobs.
  exec(
      "PRAGMA page_size=65536; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
      "PRAGMA cache_size=-16384;");
  exec(kSchema);
  exec("BEGIN");
  chunk_ = prepare("INSERT INTO chunks VALUES(?, ?, ?, ?)");
  lod_ = prepare("INSERT INTO lod VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)");
  stack_ = prepare("INSERT OR REPLACE INTO stacks VALUES(?, ?, ?)");
}

TimelineWriter::~TimelineWriter() {
  if (!db_) return;  // committed
  sqlite3_finalize(chunk_);
  sqlite3_finalize(lod_);
  sqlite3_finalize(stack_);
  sqlite3_close(db_);
  std::remove(path_.c_str());  // never committed: not a store
}

void TimelineWriter::exec(const char* sql) {
  char* error = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &error) != SQLITE_OK) {
    const std::string what = error ? error : "unknown error";
    sqlite3_free(error);
    throw StoreError("'" + path_ + "': " + what);
  }
}

sqlite3_stmt* TimelineWriter::prepare(const char* sql) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db_, sql, -1, &s, nullptr) != SQLITE_OK)
    throw StoreError("'" + path_ + "': " + sqlite3_errmsg(db_));
  return s;
}

void TimelineWriter::beginDevice(int64_t id, const std::string& name) {
  device_ = DeviceInfo{};
  device_.id = id;
  device_.name = name;
  buffer_.clear();
  buffer_.reserve(kChunkEvents * kEventBytes);
  open_.clear();
}

void TimelineWriter::add(const StoredEvent& e) {
  const int64_t index = device_.events++;
  if (buffer_.empty()) chunkFirstUs_ = e.timeUs;
  put(buffer_, e.timeUs);
  put(buffer_, e.addr);
  put(buffer_, e.bytes);
  put(buffer_, e.allocated);
  put(buffer_, e.requested);
  put(buffer_, e.reserved);
  put(buffer_, e.stack);
  put(buffer_, e.kind);
  if (e.allocated > device_.peakAllocated || index == 0) {
    device_.peakAllocated = e.allocated;
    device_.peakIndex = index;
  }
  device_.maxReserved = std::max(device_.maxReserved, e.reserved);
  device_.endUs = e.timeUs;
  if (buffer_.size() == kChunkEvents * kEventBytes) flushChunk();
  if (open_.empty()) open_.push_back({1, 0});
  mergeBucket(open_[0], {index, index, e.allocated, e.allocated, e.requested, e.requested,
                         e.reserved, e.reserved});
  if (open_[0].last - open_[0].first + 1 == kFinestBucket) writeBucket(0, open_[0]);
}

// Writes a finished bucket of `level` and adds it to the bucket above.
void TimelineWriter::writeBucket(size_t level, const Bucket& b) {
  const int64_t size = bucketEvents(level);
  const int64_t values[] = {device_.id, int64_t(level), b.first / size, b.allocMin, b.allocMax,
                            b.reqMin,   b.reqMax,       b.resMin,       b.resMax};
  for (int i = 0; i < 9; ++i) sqlite3_bind_int64(lod_, i + 1, values[i]);
  if (sqlite3_step(lod_) != SQLITE_DONE)
    throw StoreError("'" + path_ + "': " + sqlite3_errmsg(db_));
  sqlite3_reset(lod_);
  const Bucket done = b;
  open_[level] = {1, 0};
  if (level + 1 == open_.size()) open_.push_back({1, 0});
  mergeBucket(open_[level + 1], done);
  if (open_[level + 1].last - open_[level + 1].first + 1 == size * kLevelFactor)
    writeBucket(level + 1, open_[level + 1]);
}

void TimelineWriter::flushChunk() {
  if (buffer_.empty()) return;
  const int64_t count = int64_t(buffer_.size() / kEventBytes);
  const int64_t chunk = (device_.events - count) / kChunkEvents;
  sqlite3_bind_int64(chunk_, 1, (device_.id << 32) | chunk);
  sqlite3_bind_double(chunk_, 2, chunkFirstUs_);
  sqlite3_bind_double(chunk_, 3, device_.endUs);
  sqlite3_bind_blob(chunk_, 4, buffer_.data(), int(buffer_.size()), SQLITE_STATIC);
  if (sqlite3_step(chunk_) != SQLITE_DONE)
    throw StoreError("'" + path_ + "': " + sqlite3_errmsg(db_));
  sqlite3_reset(chunk_);
  buffer_.clear();
}

void TimelineWriter::markRecordingStart() {
  device_.recordingStart = device_.events;
}

void TimelineWriter::endDevice() {
  flushChunk();
  // Partial buckets, upwards, up to the first level whose one bucket covers every event.
  for (size_t l = 0; l < open_.size(); ++l) {
    const bool top = bucketEvents(l) >= device_.events;
    if (open_[l].first <= open_[l].last) {
      const Bucket b = open_[l];
      if (top) {
        const int64_t values[] = {device_.id, int64_t(l), 0,        b.allocMin, b.allocMax,
                                  b.reqMin,   b.reqMax,   b.resMin, b.resMax};
        for (int i = 0; i < 9; ++i) sqlite3_bind_int64(lod_, i + 1, values[i]);
        if (sqlite3_step(lod_) != SQLITE_DONE)
          throw StoreError("'" + path_ + "': " + sqlite3_errmsg(db_));
        sqlite3_reset(lod_);
      } else {
        writeBucket(l, b);
      }
    }
    if (top) {
      device_.levels = int(l) + 1;
      break;
    }
  }
  sqlite3_stmt* s = prepare("INSERT INTO devices VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)");
  sqlite3_bind_int64(s, 1, device_.id);
  sqlite3_bind_text(s, 2, device_.name.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(s, 3, device_.events);
  sqlite3_bind_int64(s, 4, device_.peakAllocated);
  sqlite3_bind_int64(s, 5, device_.peakIndex);
  sqlite3_bind_int64(s, 6, device_.maxReserved);
  sqlite3_bind_double(s, 7, device_.endUs);
  sqlite3_bind_int64(s, 8, device_.levels);
  sqlite3_bind_int64(s, 9, device_.recordingStart);
  const int rc = sqlite3_step(s);
  sqlite3_finalize(s);
  if (rc != SQLITE_DONE) throw StoreError("'" + path_ + "': " + sqlite3_errmsg(db_));
}

void TimelineWriter::addStack(uint32_t id, const std::string& label, const std::string& function) {
  sqlite3_bind_int64(stack_, 1, id);
  sqlite3_bind_text(stack_, 2, label.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(stack_, 3, function.c_str(), -1, SQLITE_TRANSIENT);
  if (sqlite3_step(stack_) != SQLITE_DONE)
    throw StoreError("'" + path_ + "': " + sqlite3_errmsg(db_));
  sqlite3_reset(stack_);
}

void TimelineWriter::commit() {
  exec("COMMIT");
  sqlite3_finalize(chunk_);
  sqlite3_finalize(lod_);
  sqlite3_finalize(stack_);
  const int rc = sqlite3_close(db_);
  db_ = nullptr;
  if (rc != SQLITE_OK) throw StoreError("'" + path_ + "': cannot close the timeline store");
}

}  // namespace matmulviz::store
