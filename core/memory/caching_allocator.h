#pragma once
// A simulation of PyTorch's CUDA caching allocator: the rules that decide what
// torch.cuda.memory_allocated(), max_memory_allocated() and memory_reserved() print.
//
// Source of the rules: c10/cuda/CUDACachingAllocator.cpp (PyTorch 1.13 to 2.x, default config:
// no max_split_size, no expandable segments):
// - round_size: a request is rounded to max(512, round_up(bytes, 512)).
// - get_pool: rounded sizes <= 1 MiB use the small pool, larger ones the large pool.
// - get_allocation_size: a new segment is 2 MiB for a small request, 20 MiB for a request under
//   10 MiB, else the request rounded up to a multiple of 2 MiB.
// - get_free_block: best fit among the pool's cached free blocks (smallest size, then lowest
//   address).
// - should_split: a block is split when the remainder is >= 512 B (small pool) or > 1 MiB
//   (large pool); otherwise it is handed out whole and memory_allocated counts all of it.
// - free_block: a freed block merges with free neighbours of its segment.
// - when a new segment would exceed the device's capacity, cached free segments are released
//   (release_cached_blocks) and the allocation retried before "out of memory".
// - streams (caching_allocator_streams.cpp): a block belongs to the stream it was allocated on
//   and a free block is reused only by an allocation on that stream (get_free_block's search key
//   is (stream, size, address)). A block recordStream() marked as used on other streams is not
//   cached when freed: it waits until those streams' work is done (insert_events,
//   process_events at the next allocation, synchronize_and_free_events before releasing).
// The model is exact bookkeeping; where the bytes live is the SegmentBacking's business.

#include "core/memory/device_stats.h"
#include "core/memory/memory_event.h"
#include "core/memory/pytorch_model.h"
#include "core/memory/segment_backing.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace matmulviz {

/// Thrown when an allocation cannot be satisfied within the capacity (or the host refuses).
/// The message follows PyTorch's: "out of memory: tried to allocate 2.00 GiB; 64.00 MiB
/// allocated; 66.00 MiB reserved; capacity 1024.00 MiB" (sizes as c10's format_size prints them).
class OutOfMemoryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Formats bytes as PyTorch's format_size does: "512 bytes", "1.50 KiB", "20.00 MiB", "2.00 GiB";
/// a unit is used up to and including its limit ("1024.00 KiB" for 1 MiB).
std::string formatBytes(int64_t bytes);

class CachingAllocator {
 public:
  static constexpr int64_t kMinBlockSize = 512;        // round_size granularity
  static constexpr int64_t kSmallSize = 1 << 20;       // largest small-pool request
  static constexpr int64_t kSmallBuffer = 2 << 20;     // small-pool segment
  static constexpr int64_t kLargeBuffer = 20 << 20;    // segment for requests < 10 MiB
  static constexpr int64_t kMinLargeAlloc = 10 << 20;  // from here, segment = request
  static constexpr int64_t kRoundLarge = 2 << 20;      // large segments round to 2 MiB

  struct Options {
    std::optional<int64_t> capacityBytes;  ///< device memory; none = unlimited
    bool recordTimeline = true;  ///< keep every event and every record (false: live ones only)
    /// Which PyTorch on which GPU (core/memory/pytorch_model.h): decides the cuBLAS workspace
    /// (core/memory/cublas_workspace.h) and architecture-sized kernel buffers.
    PyTorchModel pytorch = defaultPyTorchModel();
  };

  /// A block handed out: its record id and where its bytes are (nullptr on meta).
  struct Allocation {
    int64_t id = -1;
    void* ptr = nullptr;
    int64_t blockBytes = 0;
  };

  /// `backing` must outlive the allocator.
  CachingAllocator(SegmentBacking& backing, Options options);
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  /// Allocates `requestedBytes` (>= 0) for op `opName`. Throws OutOfMemoryError.
  Allocation allocate(int64_t requestedBytes, const std::string& label);
  /// Returns a block to the cache (merging with free neighbours). Never throws.
  void free(int64_t allocationId) noexcept;
  /// Releases every cached segment that is entirely free (torch.cuda.empty_cache()).
  void emptyCache() noexcept;

  /// The stream new allocations are made on (torch.cuda.current_stream(); 0 is the default
  /// stream); returns the previous one. A free block is reused only on its own stream.
  int64_t setStream(int64_t stream) {
    const int64_t previous = currentStream_;
    currentStream_ = stream;
    return previous;
  }
  int64_t currentStream() const { return currentStream_; }
  /// Tensor.record_stream(stream): live allocation `allocationId` is also used on `stream`; when
  /// freed, its block is not reused until that stream's work up to the free is done
  /// (DeviceCachingAllocator::recordStream; uses on the allocation's own stream are ignored).
  void recordStream(int64_t allocationId, int64_t stream);
  /// The host waited for `stream` (Stream.synchronize(), or an event on it): the events its
  /// frees recorded are complete, and the next allocation returns their blocks to the cache.
  void synchronizeStream(int64_t stream) noexcept;
  /// torch.cuda.synchronize(): every stream's work is done.
  void synchronize() noexcept;
  /// Bytes of freed blocks that still wait for another stream's work (counted in neither
  /// memory_allocated() nor the cache: "active_pending_free" in a snapshot).
  int64_t pendingFreeBytes() const {
    return stats_.activeBytes.all().current - stats_.allocatedBytes.all().current;
  }

  /// memory_allocated(), requested_bytes and memory_reserved() now and at their peaks: the
  /// "all" statistics of stats().
  MemoryCounters current() const {
    return {stats_.allocatedBytes.all().current, stats_.requestedBytes.all().current,
            stats_.reservedBytes.all().current};
  }
  MemoryCounters peak() const {
    return {stats_.allocatedBytes.all().peak, stats_.requestedBytes.all().peak,
            stats_.reservedBytes.all().peak};
  }
  /// torch.cuda.reset_peak_memory_stats(): peaks become the current values.
  void resetPeak() { stats_.resetPeak(); }
  /// torch.cuda.reset_accumulated_memory_stats(): the totals and counts start again from 0.
  void resetAccumulated() { stats_.resetAccumulated(); }
  /// Every statistic torch.cuda.memory_stats() returns, kept as PyTorch keeps them
  /// (core/memory/device_stats.h).
  const DeviceStats& stats() const { return stats_; }

  /// How often an allocation had to release cached segments and retry (num_alloc_retries), and
  /// how often it failed (num_ooms).
  int64_t allocRetries() const { return stats_.numAllocRetries; }
  int64_t ooms() const { return stats_.numOoms; }
  /// The request (bytes) of the last allocation that failed, 0 before any.
  int64_t lastOomRequest() const { return lastOomRequest_; }

  /// Called after every allocation with its record (e.g. to note which Python line made it).
  /// One observer; an empty function removes it.
  void setAllocationObserver(std::function<void(const AllocationRecord&)> observer) {
    observer_ = std::move(observer);
  }
  /// Called when something besides a user variable starts (+1) or stops (-1) keeping allocation
  /// `id` alive (Storage::addHolder / removeHolder: "saved as mat2 of BmmBackward0 ..."), e.g. to
  /// say what held each block at the peak. One observer; an empty function removes it.
  using HolderObserver = std::function<void(int64_t id, const std::string& why, int delta)>;
  void setHolderObserver(HolderObserver observer) { holderObserver_ = std::move(observer); }
  void notifyHolder(int64_t id, const std::string& why, int delta) const {
    if (holderObserver_) holderObserver_(id, why, delta);
  }

  /// The op that allocations and events are attributed to, as a stack (see OpScope). With
  /// Options::recordTimeline each op's span (begin, end, depth) is kept for the trace.
  void pushOp(const std::string& opName);
  void popOp() noexcept;
  const std::string& currentOp() const { return opNames_[currentOpId_]; }
  struct OpSpan {
    int32_t opId;
    int32_t depth;
    double beginUs, endUs;
  };
  const std::vector<OpSpan>& opSpans() const { return spans_; }
  const std::vector<std::string>& opNames() const { return opNames_; }

  /// Renames an allocation (e.g. a temporary that became `out`).
  void setLabel(int64_t allocationId, const std::string& label);
  /// Says what an allocation holds (core/memory/memory_category.h); unknown ids are ignored.
  void setCategory(int64_t allocationId, MemoryCategory category);
  /// The category new allocations get until changed (see CategoryScope); returns the previous
  /// one. Other when the allocator is made.
  MemoryCategory setDefaultCategory(MemoryCategory category) {
    const MemoryCategory previous = defaultCategory_;
    defaultCategory_ = category;
    return previous;
  }
  MemoryCategory defaultCategory() const { return defaultCategory_; }
  const AllocationRecord& record(int64_t allocationId) const;
  /// Live allocations, by id.
  std::vector<const AllocationRecord*> liveRecords() const;
  const std::vector<MemoryEvent>& events() const { return events_; }
  /// All records ever made (only complete when Options::recordTimeline).
  const std::unordered_map<int64_t, AllocationRecord>& records() const { return records_; }
  double elapsedUs() const;
  /// Sum of all block bytes ever handed out (a measure of the memory traffic of a pass).
  int64_t cumulativeAllocatedBytes() const { return cumulativeAllocated_; }
  int64_t segmentCount() const { return static_cast<int64_t>(segments_.size()); }
  const Options& options() const { return options_; }
  /// Starts or stops keeping every event and record (Options::recordTimeline) from now on; the
  /// counters are kept either way. For a long-lived device that records only part of its life.
  void setRecordTimeline(bool on) { options_.recordTimeline = on; }

  /// The cuBLAS workspace of thread `thread` on the current stream (a CudaThread,
  /// core/memory/cublas_workspace.h; its cuBLASLt workspace at kCudaThreadCount + thread): PyTorch
  /// keeps one per (handle, stream), a handle per thread. nullopt before the thread's first call
  /// on this stream, then its allocation id (-1: a 0-byte workspace, no block). Kept by
  /// useCublasHandle() and useCublasLtHandle(); the block is never freed.
  std::optional<int64_t> cublasWorkspace(int thread) const {
    auto it = cublasWorkspaces_.find({thread, currentStream_});
    if (it == cublasWorkspaces_.end()) return std::nullopt;
    return it->second;
  }
  void setCublasWorkspace(int thread, int64_t allocationId) {
    cublasWorkspaces_[{thread, currentStream_}] = allocationId;
  }

  /// One segment as torch.cuda.memory_snapshot() lists it (c10/cuda/CUDACachingAllocator.cpp,
  /// snapshot(): SegmentInfo and BlockInfo): its blocks in address order, covering it.
  struct SegmentLayout {
    struct BlockLayout {
      int64_t address = 0;
      int64_t size = 0;       ///< bytes of the block
      int64_t requested = 0;  ///< bytes asked for (0 for a free block)
      bool allocated = false;
      bool pendingFree = false;   ///< freed, waiting for another stream's work
      int64_t allocationId = -1;  ///< -1 for a free block
    };
    int64_t address = 0;
    int64_t size = 0;
    bool small = false;  ///< the small pool's (2 MiB segments)
    int64_t stream = 0;  ///< the stream it was allocated on
    std::vector<BlockLayout> blocks;
  };
  /// The segments the model holds now, by address (virtual device addresses, as in events).
  std::vector<SegmentLayout> segmentLayout() const;
  /// The virtual address of live allocation `allocationId`'s block; -1 if it is not live.
  int64_t blockAddress(int64_t allocationId) const;

 private:
  struct Segment;
  struct Block {
    int64_t address = 0;  // virtual device address
    int64_t size = 0;
    bool allocated = false;
    bool small = false;
    Segment* segment = nullptr;
    Block* prev = nullptr;
    Block* next = nullptr;
    int64_t allocationId = -1;
    int64_t requested = 0;
    int64_t stream = 0;            // the allocation stream
    std::set<int64_t> streamUses;  // other streams it was used on (recordStream)
    int eventCount = 0;            // outstanding events of those streams after a free
    bool freeable() const { return !allocated && eventCount == 0; }
  };
  struct BlockLess {  // BlockComparatorSize: stream, then size, then address
    bool operator()(const Block* a, const Block* b) const {
      if (a->stream != b->stream) return a->stream < b->stream;
      return a->size != b->size ? a->size < b->size : a->address < b->address;
    }
  };
  using Pool = std::set<Block*, BlockLess>;
  struct Segment {
    int64_t address = 0;
    int64_t size = 0;
    void* data = nullptr;
    bool small = false;
    int64_t stream = 0;
  };
  struct StreamEvent {  // an event recorded on a stream when a block it used was freed
    Block* block;
    bool done;
  };

  Block* findFreeBlock(Pool& pool, int64_t size);
  void freeBlock(Block* block) noexcept;  // into its pool, merged with free neighbours
  void insertEvents(Block* block);
  void processEvents() noexcept;
  void synchronizeAndFreeEvents() noexcept;
  Block* newSegment(int64_t size, bool small, int64_t requested);
  void releaseSegment(Block* block) noexcept;
  bool releaseCachedSegments() noexcept;
  void record(MemoryEventKind kind, int64_t id, int64_t bytes);
  Pool& poolFor(bool small) { return small ? smallPool_ : largePool_; }

  SegmentBacking& backing_;
  Options options_;
  Pool smallPool_, largePool_;
  std::map<int64_t, std::unique_ptr<Segment>> segments_;        // by address
  std::unordered_map<int64_t, std::unique_ptr<Block>> blocks_;  // by address
  std::unordered_map<int64_t, Block*> allocatedBlocks_;         // by allocation id
  std::unordered_map<int64_t, AllocationRecord> records_;
  std::vector<MemoryEvent> events_;
  std::vector<std::string> opNames_{"(none)"};
  std::unordered_map<std::string, int32_t> opIds_{{"(none)", 0}};
  int32_t currentOpId_ = 0;
  MemoryCategory defaultCategory_ = MemoryCategory::Other;
  struct OpFrame {
    int32_t previousOp;
    int64_t previousCall;
    double beginUs;
  };
  std::vector<OpFrame> opStack_;
  int64_t opCalls_ = 0, currentOpCall_ = 0;  // each pushOp is a new call
  int64_t currentStream_ = 0;
  std::map<int64_t, std::vector<StreamEvent>> streamEvents_;  // by stream, in record order
  std::vector<OpSpan> spans_;
  int64_t lastOomRequest_ = 0;
  DeviceStats stats_;
  std::function<void(const AllocationRecord&)> observer_;
  HolderObserver holderObserver_;
  int64_t cumulativeAllocated_ = 0;
  std::map<std::pair<int, int64_t>, int64_t> cublasWorkspaces_;  // by (CudaThread, stream)
  int64_t nextAddress_ = int64_t{1} << 32;
  int64_t nextId_ = 1;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace matmulviz
