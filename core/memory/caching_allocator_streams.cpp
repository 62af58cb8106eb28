// CachingAllocator's streams: a block used on another stream is not reused until that stream's
// work up to the free is done. Source: c10/cuda/CUDACachingAllocator.cpp (PyTorch 1.13 to 2.x),
// DeviceCachingAllocator::recordStream, insert_events, process_events and
// synchronize_and_free_events.
//
// The model has no clock: an event recorded at a free is complete once the host waited for its
// stream (synchronizeStream, synchronize) or the allocator synchronized before releasing cached
// segments (empty_cache, or an allocation about to fail). That is the latest moment a GPU could
// return the block; a GPU that ran ahead of the host returns it earlier, so a program that
// frees on one stream what another used and never synchronizes may reserve more here than on a
// GPU.
#include "core/memory/caching_allocator.h"

namespace matmulviz {

void CachingAllocator::recordStream(int64_t allocationId, int64_t stream) {
  auto it = allocatedBlocks_.find(allocationId);
  if (it == allocatedBlocks_.end()) return;
  Block* block = it->second;
  if (stream == block->stream) return;  // uses on the allocation stream need no event
  block->streamUses.insert(stream);
}

void CachingAllocator::insertEvents(Block* block) {
  // One event per stream the block was used on; the block stays out of the pool until each
  // is complete.
  for (const int64_t stream : block->streamUses) {
    streamEvents_[stream].push_back({block, false});
    ++block->eventCount;
  }
  block->streamUses.clear();
}

void CachingAllocator::synchronizeStream(int64_t stream) noexcept {
  auto it = streamEvents_.find(stream);
  if (it == streamEvents_.end()) return;
  for (StreamEvent& e : it->second) e.done = true;
}

void CachingAllocator::synchronize() noexcept {
  for (auto& [stream, events] : streamEvents_)
    for (StreamEvent& e : events) e.done = true;
}

void CachingAllocator::processEvents() noexcept {
  // Each stream's events complete in order: stop at the first one still outstanding.
  for (auto it = streamEvents_.begin(); it != streamEvents_.end();) {
    std::vector<StreamEvent>& events = it->second;
    size_t done = 0;
    while (done < events.size() && events[done].done) {
      Block* block = events[done++].block;
      if (--block->eventCount == 0) freeBlock(block);
    }
    events.erase(events.begin(), events.begin() + static_cast<std::ptrdiff_t>(done));
    it = events.empty() ? streamEvents_.erase(it) : std::next(it);
  }
}

void CachingAllocator::synchronizeAndFreeEvents() noexcept {
  synchronize();
  processEvents();
}

}  // namespace matmulviz
