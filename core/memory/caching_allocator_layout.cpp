// CachingAllocator's segment layout: what torch.cuda.memory_snapshot() reports of a real
// allocator (c10/cuda/CUDACachingAllocator.cpp, DeviceCachingAllocator::snapshot), read from the
// model's segments and their chains of blocks.
#include "core/memory/caching_allocator.h"

namespace matmulviz {

std::vector<CachingAllocator::SegmentLayout> CachingAllocator::segmentLayout() const {
  std::vector<SegmentLayout> out;
  out.reserve(segments_.size());
  for (const auto& [address, segment] : segments_) {
    SegmentLayout s;
    s.address = address;
    s.size = segment->size;
    s.small = segment->small;
    s.stream = segment->stream;
    auto first = blocks_.find(address);
    for (const Block* b = first == blocks_.end() ? nullptr : first->second.get(); b; b = b->next) {
      SegmentLayout::BlockLayout block;
      block.address = b->address;
      block.size = b->size;
      block.allocated = b->allocated;
      block.pendingFree = !b->allocated && b->eventCount > 0;
      block.requested = b->allocated || block.pendingFree ? b->requested : 0;
      block.allocationId = b->allocated ? b->allocationId : -1;
      s.blocks.push_back(block);
    }
    out.push_back(std::move(s));
  }
  return out;
}

int64_t CachingAllocator::blockAddress(int64_t allocationId) const {
  auto it = allocatedBlocks_.find(allocationId);
  return it == allocatedBlocks_.end() ? -1 : it->second->address;
}

}  // namespace matmulviz
