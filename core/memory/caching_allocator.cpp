#include "core/memory/caching_allocator.h"

#include <algorithm>
#include <cstdio>
#include <new>

namespace matmulviz {

const char* memoryEventKindName(MemoryEventKind k) {
  switch (k) {
    case MemoryEventKind::Alloc:
      return "alloc";
    case MemoryEventKind::Free:
      return "free";
    case MemoryEventKind::SegmentAlloc:
      return "segment_alloc";
    case MemoryEventKind::SegmentFree:
      return "segment_free";
    case MemoryEventKind::Oom:
      return "oom";
  }
  return "?";
}

std::string formatBytes(int64_t bytes) {
  // format_size of c10/cuda/CUDACachingAllocator.cpp: each unit up to and including its limit,
  // so 1024 bytes is "1024 bytes" and 1 GiB "1024.00 MiB".
  char buf[64];
  const double b = static_cast<double>(bytes);
  if (bytes <= 1024) {
    std::snprintf(buf, sizeof buf, "%lld bytes", static_cast<long long>(bytes));
  } else if (bytes <= (int64_t{1} << 20)) {
    std::snprintf(buf, sizeof buf, "%.2f KiB", b / 1024.0);
  } else if (bytes <= (int64_t{1} << 30)) {
    std::snprintf(buf, sizeof buf, "%.2f MiB", b / (1024.0 * 1024.0));
  } else {
    std::snprintf(buf, sizeof buf, "%.2f GiB", b / (1024.0 * 1024.0 * 1024.0));
  }
  return buf;
}

namespace {
int64_t roundSize(int64_t size) {
  if (size < CachingAllocator::kMinBlockSize) return CachingAllocator::kMinBlockSize;
  return CachingAllocator::kMinBlockSize *
         ((size + CachingAllocator::kMinBlockSize - 1) / CachingAllocator::kMinBlockSize);
}
int64_t allocationSize(int64_t size) {
  if (size <= CachingAllocator::kSmallSize) return CachingAllocator::kSmallBuffer;
  if (size < CachingAllocator::kMinLargeAlloc) return CachingAllocator::kLargeBuffer;
  return CachingAllocator::kRoundLarge *
         ((size + CachingAllocator::kRoundLarge - 1) / CachingAllocator::kRoundLarge);
}
bool shouldSplit(int64_t blockSize, int64_t size, bool small) {
  const int64_t remaining = blockSize - size;
  return small ? remaining >= CachingAllocator::kMinBlockSize
               : remaining > CachingAllocator::kSmallSize;
}
}  // namespace

CachingAllocator::CachingAllocator(SegmentBacking& backing, Options options)
    : backing_(backing), options_(options), start_(std::chrono::steady_clock::now()) {}

CachingAllocator::~CachingAllocator() {
  for (auto& [address, segment] : segments_) backing_.release(segment->data, segment->size);
}

double CachingAllocator::elapsedUs() const {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start_)
      .count();
}

void CachingAllocator::pushOp(const std::string& opName) {
  auto [it, inserted] = opIds_.try_emplace(opName, static_cast<int32_t>(opNames_.size()));
  if (inserted) opNames_.push_back(opName);
  opStack_.push_back({currentOpId_, currentOpCall_, options_.recordTimeline ? elapsedUs() : 0.0});
  currentOpId_ = it->second;
  currentOpCall_ = ++opCalls_;
}

void CachingAllocator::popOp() noexcept {
  if (opStack_.empty()) return;
  const OpFrame frame = opStack_.back();
  opStack_.pop_back();
  if (options_.recordTimeline) {
    try {
      spans_.push_back(
          {currentOpId_, static_cast<int32_t>(opStack_.size()), frame.beginUs, elapsedUs()});
    } catch (...) {  // out of host memory while tracing: drop the span
    }
  }
  currentOpId_ = frame.previousOp;
  currentOpCall_ = frame.previousCall;
}

void CachingAllocator::record(MemoryEventKind kind, int64_t id, int64_t bytes) {
  if (options_.recordTimeline)
    events_.push_back({kind, id, bytes, elapsedUs(), current(), currentOpId_});
}

CachingAllocator::Block* CachingAllocator::findFreeBlock(Pool& pool, int64_t size) {
  Block key;
  key.stream = currentStream_;
  key.size = size;
  key.address = 0;
  auto it = pool.lower_bound(&key);
  if (it == pool.end() || (*it)->stream != currentStream_) return nullptr;
  Block* block = *it;
  pool.erase(it);
  return block;
}

CachingAllocator::Block* CachingAllocator::newSegment(int64_t size, bool small, int64_t requested) {
  const int64_t segmentSize = allocationSize(size);
  auto fits = [&] {
    return !options_.capacityBytes ||
           current().reservedBytes + segmentSize <= *options_.capacityBytes;
  };
  if (!fits()) {
    ++stats_.numAllocRetries;
    releaseCachedSegments();
    if (!fits()) {
      ++stats_.numOoms;
      lastOomRequest_ = requested;
      record(MemoryEventKind::Oom, -1, requested);
      const bool wholeSegment = segmentSize > roundSize(requested);
      throw OutOfMemoryError(
          "out of memory: tried to allocate " + formatBytes(requested) +
          (wholeSegment ? " (which needs a new segment of " + formatBytes(segmentSize) + ")" : "") +
          "; " + formatBytes(current().allocatedBytes) + " allocated; " +
          formatBytes(current().reservedBytes) + " reserved; capacity " +
          formatBytes(*options_.capacityBytes));
    }
  }
  void* data = nullptr;
  try {
    data = backing_.allocate(static_cast<std::size_t>(segmentSize));
  } catch (const std::bad_alloc&) {
    ++stats_.numAllocRetries;
    releaseCachedSegments();
    try {
      data = backing_.allocate(static_cast<std::size_t>(segmentSize));
    } catch (const std::bad_alloc&) {
      ++stats_.numOoms;
      lastOomRequest_ = requested;
      record(MemoryEventKind::Oom, -1, requested);
      throw OutOfMemoryError("out of memory: tried to allocate " + formatBytes(requested) +
                             " (a segment of " + formatBytes(segmentSize) +
                             ") and the backing memory refused; " +
                             formatBytes(current().allocatedBytes) + " allocated");
    }
  }
  auto segment = std::make_unique<Segment>();
  segment->address = nextAddress_;
  segment->size = segmentSize;
  segment->data = data;
  segment->small = small;
  segment->stream = currentStream_;
  // Keep virtual segments apart and 2 MiB aligned, as cudaMalloc's are.
  nextAddress_ += ((segmentSize + kRoundLarge - 1) / kRoundLarge + 1) * kRoundLarge;
  auto block = std::make_unique<Block>();
  block->address = segment->address;
  block->size = segmentSize;
  block->small = small;
  block->stream = currentStream_;
  block->segment = segment.get();
  Block* raw = block.get();
  blocks_.emplace(raw->address, std::move(block));
  stats_.segment.increase(small, 1);  // alloc_block
  stats_.reservedBytes.increase(small, segmentSize);
  ++stats_.numDeviceAlloc;
  segments_.emplace(segment->address, std::move(segment));
  record(MemoryEventKind::SegmentAlloc, -1, segmentSize);
  return raw;
}

CachingAllocator::Allocation CachingAllocator::allocate(int64_t requestedBytes,
                                                        const std::string& label) {
  if (requestedBytes < 0) throw std::invalid_argument("negative allocation size");
  processEvents();  // blocks whose other streams are done return to the cache first
  const int64_t size = roundSize(requestedBytes);
  const bool small = size <= kSmallSize;
  Pool& pool = poolFor(small);
  Block* block = findFreeBlock(pool, size);
  if (!block) block = newSegment(size, small, requestedBytes);

  const bool alreadySplit = block->prev || block->next;
  if (shouldSplit(block->size, size, small)) {
    if (alreadySplit) {  // an already-split free block shrinks by `size`
      stats_.inactiveSplitBytes.decrease(small, size);
    } else {  // a new free remainder of a segment in use
      stats_.inactiveSplitBytes.increase(small, block->size - size);
      stats_.inactiveSplit.increase(small, 1);
    }
    // The front part is handed out; the remainder goes back to the pool (alloc_found_block).
    auto rest = std::make_unique<Block>();
    rest->address = block->address + size;
    rest->size = block->size - size;
    rest->small = small;
    rest->stream = block->stream;
    rest->segment = block->segment;
    rest->prev = block;
    rest->next = block->next;
    if (block->next) block->next->prev = rest.get();
    block->next = rest.get();
    block->size = size;
    pool.insert(rest.get());
    blocks_.emplace(rest->address, std::move(rest));
  } else if (alreadySplit) {  // an already-split free block becomes active whole
    stats_.inactiveSplitBytes.decrease(small, block->size);
    stats_.inactiveSplit.decrease(small, 1);
  }
  block->allocated = true;
  block->requested = requestedBytes;
  block->allocationId = nextId_++;
  allocatedBlocks_.emplace(block->allocationId, block);

  AllocationRecord rec;
  rec.id = block->allocationId;
  rec.label = label;
  rec.opId = currentOpId_;
  rec.requestedBytes = requestedBytes;
  rec.blockBytes = block->size;
  rec.small = small;
  rec.category = defaultCategory_;
  rec.opCall = currentOpCall_;
  records_.emplace(rec.id, std::move(rec));

  cumulativeAllocated_ += block->size;
  stats_.allocation.increase(small, 1);  // alloc_found_block
  stats_.allocatedBytes.increase(small, block->size);
  stats_.active.increase(small, 1);
  stats_.activeBytes.increase(small, block->size);
  stats_.requestedBytes.increase(small, requestedBytes);
  record(MemoryEventKind::Alloc, block->allocationId, block->size);
  if (observer_) observer_(records_.at(block->allocationId));

  void* ptr = nullptr;
  if (block->segment->data)
    ptr = static_cast<char*>(block->segment->data) + (block->address - block->segment->address);
  return {block->allocationId, ptr, block->size};
}

void CachingAllocator::free(int64_t allocationId) noexcept {
  // DeviceCachingAllocator::free: memory_allocated() drops now; a block another stream used
  // waits for that stream's events (insert_events) before free_block caches it.
  auto it = allocatedBlocks_.find(allocationId);
  if (it == allocatedBlocks_.end()) return;
  Block* block = it->second;
  allocatedBlocks_.erase(it);
  block->allocated = false;
  stats_.allocation.decrease(block->small, 1);
  stats_.allocatedBytes.decrease(block->small, block->size);
  const int64_t freedSize = block->size;
  if (options_.recordTimeline) {
    AllocationRecord& rec = records_[allocationId];
    rec.alive = false;
    rec.freedInItsOp = currentOpCall_ != 0 && rec.opCall == currentOpCall_;
  }
  if (block->streamUses.empty()) {
    freeBlock(block);
  } else {
    try {
      insertEvents(block);
    } catch (...) {  // out of host memory for the event list: cache it at once
      block->eventCount = 0;
      block->streamUses.clear();
      freeBlock(block);
    }
  }
  record(MemoryEventKind::Free, allocationId, freedSize);
  if (!options_.recordTimeline) records_.erase(allocationId);
}

void CachingAllocator::freeBlock(Block* block) noexcept {
  const bool small = block->small;
  const int64_t originalSize = block->size, requested = block->requested;
  block->requested = 0;
  Pool& pool = poolFor(small);
  int64_t splitBlocks = 0, splitBytes = 0;        // net_change_inactive_split_blocks / _size
  auto mergeInto = [&](Block* dst, Block* src) {  // src is dst's next neighbour
    --splitBlocks;
    splitBytes -= dst == block ? src->size : dst->size;  // what the freed block subsumed
    dst->size += src->size;
    dst->next = src->next;
    if (src->next) src->next->prev = dst;
    blocks_.erase(src->address);
  };
  if (block->prev && block->prev->freeable()) {  // try_merge_blocks
    Block* prev = block->prev;
    pool.erase(prev);
    mergeInto(prev, block);
    block = prev;
  }
  if (block->next && block->next->freeable()) {
    Block* next = block->next;
    pool.erase(next);
    mergeInto(block, next);
  }
  pool.insert(block);
  if (block->prev || block->next) ++splitBlocks, splitBytes += block->size;
  stats_.inactiveSplit.change(small, splitBlocks);
  stats_.inactiveSplitBytes.change(small, splitBytes);
  stats_.active.decrease(small, 1);
  stats_.activeBytes.decrease(small, originalSize);
  stats_.requestedBytes.decrease(small, requested);
}

void CachingAllocator::releaseSegment(Block* block) noexcept {
  Segment* segment = block->segment;
  poolFor(block->small).erase(block);
  ++stats_.numDeviceFree;  // release_block
  stats_.segment.decrease(segment->small, 1);
  stats_.reservedBytes.decrease(segment->small, segment->size);
  const int64_t size = segment->size;
  backing_.release(segment->data, static_cast<std::size_t>(segment->size));
  blocks_.erase(block->address);
  segments_.erase(segment->address);
  record(MemoryEventKind::SegmentFree, -1, size);
}

bool CachingAllocator::releaseCachedSegments() noexcept {
  ++stats_.numSyncAllStreams;
  synchronizeAndFreeEvents();  // release_cached_blocks waits for every pending free first
  std::vector<Block*> whole;
  for (Pool* pool : {&smallPool_, &largePool_})
    for (Block* b : *pool)
      if (!b->prev && !b->next) whole.push_back(b);
  for (Block* b : whole) releaseSegment(b);
  return !whole.empty();
}

void CachingAllocator::emptyCache() noexcept {
  releaseCachedSegments();
}

void CachingAllocator::setLabel(int64_t allocationId, const std::string& label) {
  auto it = records_.find(allocationId);
  if (it != records_.end()) it->second.label = label;
}

void CachingAllocator::setCategory(int64_t allocationId, MemoryCategory category) {
  auto it = records_.find(allocationId);
  if (it != records_.end()) it->second.category = category;
}

const AllocationRecord& CachingAllocator::record(int64_t allocationId) const {
  return records_.at(allocationId);
}

std::vector<const AllocationRecord*> CachingAllocator::liveRecords() const {
  std::vector<const AllocationRecord*> out;
  out.reserve(allocatedBlocks_.size());
  for (const auto& [id, block] : allocatedBlocks_) out.push_back(&records_.at(id));
  std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return a->id < b->id; });
  return out;
}

}  // namespace matmulviz
