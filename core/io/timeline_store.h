#pragma once
// Memory timelines too large to hold as a MemoryTimeline (millions of events), kept on disk in
// an SQLite database, as PyTorch's own _dump_snapshot_sqlite keeps snapshots. Qt-free (the
// SQLite C API).
//
// Schema (one file, several devices):
//   devices(id, name, events, peak_allocated, peak_index, max_reserved, end_us, levels,
//     recording_start)
//   chunks(id = device << 32 | chunk, first_us, last_us, data): the events, kChunkEvents a row,
//     packed little-endian (StoredEvent below, kEventBytes each); queried by event range, and
//     by time through first_us/last_us
//   lod(device, level, bucket, alloc_min, alloc_max, req_min, req_max, res_min, res_max): the
//     level of detail: the counters' min and max over the events [bucket * B, (bucket + 1) * B)
//     with B = kFinestBucket * kLevelFactor^level, for every level down to one bucket
//   stacks(id, label, function): what the view says about an event's stack
// An event's index is its position in its device's timeline, from 0. Sizes are bytes, times
// microseconds since the first event.

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace matmulviz::store {

/// An SQLite failure: what() names the file and SQLite's message.
class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr int64_t kChunkEvents = 4096;
inline constexpr int64_t kFinestBucket = 64;
inline constexpr int64_t kLevelFactor = 8;
inline constexpr size_t kEventBytes = 53;

/// One event and the counters after it.
struct StoredEvent {
  double timeUs = 0;
  int64_t addr = 0;   ///< the block's address; 0 for a segment event, free bytes for an OOM
  int64_t bytes = 0;  ///< the block's, segment's or failed request's size
  int64_t allocated = 0, requested = 0, reserved = 0;
  uint32_t stack = 0;  ///< id in the stacks table (0: no frames)
  uint8_t kind = 0;    ///< MemoryEventKind
};

/// The counters' range over the events [first, last].
struct Bucket {
  int64_t first = 0, last = 0;
  int64_t allocMin = 0, allocMax = 0, reqMin = 0, reqMax = 0, resMin = 0, resMax = 0;
};

/// Joins `b` to `into`: the union of their event ranges and the min and max of each counter.
/// An empty `into` (first > last, as a level's open bucket starts) becomes `b`.
void mergeBucket(Bucket& into, const Bucket& b);

struct DeviceInfo {
  int64_t id = 0;
  std::string name;  ///< "cuda:0"
  int64_t events = 0;
  int64_t peakAllocated = 0;  ///< bytes
  int64_t peakIndex = 0;      ///< the first event reaching it
  int64_t maxReserved = 0;
  double endUs = 0;
  int levels = 0;  ///< levels of detail; the last has one bucket
  /// The index of the first event the recording made: those before it place what was alive
  /// when the recording began (a snapshot's blocks and segments at time 0); 0 when none.
  int64_t recordingStart = 0;
};

/// Writes a new store. Events go in per device, in order; levels of detail are built as they
/// arrive. Throws StoreError on any SQLite failure. Not thread-safe; one writer per file.
class TimelineWriter {
 public:
  /// Creates the store at `path`, replacing a file there.
  explicit TimelineWriter(const std::string& path);
  ~TimelineWriter();
  TimelineWriter(const TimelineWriter&) = delete;
  TimelineWriter& operator=(const TimelineWriter&) = delete;

  void beginDevice(int64_t id, const std::string& name);
  void add(const StoredEvent& e);
  /// The events added so far place what was alive before the recording (DeviceInfo::
  /// recordingStart); call at most once per device, after those events.
  void markRecordingStart();
  void endDevice();
  void addStack(uint32_t id, const std::string& label, const std::string& function);
  /// Writes everything and closes the file.
  void commit();

 private:
  void flushChunk();
  void writeBucket(size_t level, const Bucket& b);
  void exec(const char* sql);
  sqlite3_stmt* prepare(const char* sql);

  std::string path_;
  sqlite3* db_ = nullptr;
  sqlite3_stmt* chunk_ = nullptr;
  sqlite3_stmt* lod_ = nullptr;
  sqlite3_stmt* stack_ = nullptr;
  DeviceInfo device_;
  std::vector<uint8_t> buffer_;
  double chunkFirstUs_ = 0;
  std::vector<Bucket> open_;  ///< the bucket being filled at each level (first > last: empty)
};

/// A store opened for reading. Queries take a few milliseconds for a screen's worth of data.
/// Use from one thread at a time.
class TimelineStore {
 public:
  /// Opens the store at `path` read-only; when `removeWhenClosed`, the destructor deletes the
  /// file (a store made for one session). Throws StoreError when it is not a store.
  explicit TimelineStore(const std::string& path, bool removeWhenClosed = false);
  ~TimelineStore();
  TimelineStore(const TimelineStore&) = delete;
  TimelineStore& operator=(const TimelineStore&) = delete;

  const std::string& path() const { return path_; }
  const std::vector<DeviceInfo>& devices() const { return devices_; }
  /// The events [first, first + count) of `device` that exist (fewer at the end).
  std::vector<StoredEvent> events(int64_t device, int64_t first, int64_t count) const;
  /// The counters' min and max per pixel column over the event range [x0, x1) drawn `pixels`
  /// wide, from the coarsest level of detail whose buckets are no wider than a column (single
  /// events when zoomed in that far). Columns without an event are left out; at most `pixels`.
  std::vector<Bucket> columns(int64_t device, double x0, double x1, int pixels) const;
  /// The buckets of one level over [first, last] event indices: for tests and columns().
  std::vector<Bucket> level(int64_t device, int level, int64_t first, int64_t last) const;
  /// The index of the first event at or after `timeUs`; events() when none.
  int64_t indexAtTime(int64_t device, double timeUs) const;
  /// "train.py:42" and the function of stack `id`; empty when unknown.
  std::pair<std::string, std::string> stack(uint32_t id) const;

 private:
  using Chunk = std::shared_ptr<const std::vector<StoredEvent>>;
  /// The decoded chunk `chunk` of `device` (empty when none): the last kCachedChunks stay
  /// decoded, so that panning reads only the chunks that come into view.
  Chunk chunk(int64_t device, int64_t chunk) const;
  /// Calls f(index, event) for the events [first, last] of `device` that exist.
  void forEachEvent(int64_t device, int64_t first, int64_t last,
                    const std::function<void(int64_t, const StoredEvent&)>& f) const;
  static constexpr size_t kCachedChunks = 64;

  std::string path_;
  bool remove_ = false;
  sqlite3* db_ = nullptr;
  std::vector<DeviceInfo> devices_;
  mutable std::list<std::pair<int64_t, Chunk>> cache_;  ///< by chunk id, most recent first
};

/// Decodes the events of a chunk blob (kEventBytes each).
std::vector<StoredEvent> decodeEvents(const uint8_t* data, size_t bytes);

}  // namespace matmulviz::store
