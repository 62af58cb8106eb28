#pragma once
// One entry of the memory timeline, and the record of one allocation (its name and owner).

#include "core/memory/memory_category.h"

#include <cstdint>
#include <string>

namespace matmulviz {

enum class MemoryEventKind : uint8_t {
  Alloc,         ///< a block was handed out (allocated += block size)
  Free,          ///< a block was given back to the cache (allocated -= block size)
  SegmentAlloc,  ///< a new segment was reserved (cudaMalloc; reserved += segment size)
  SegmentFree,   ///< a cached segment was released (cudaFree; reserved -= segment size)
  Oom,           ///< an allocation failed against the capacity
};

const char* memoryEventKindName(MemoryEventKind k);

/// Counters after an event, in bytes: memory_allocated, the exact requests, memory_reserved.
struct MemoryCounters {
  int64_t allocatedBytes = 0;
  int64_t requestedBytes = 0;
  int64_t reservedBytes = 0;
};

struct MemoryEvent {
  MemoryEventKind kind;
  int64_t allocationId;  ///< AllocationRecord::id, or -1 for segment events
  int64_t bytes;         ///< block size (Alloc/Free), segment size (Segment*), request (Oom)
  double timeUs;         ///< microseconds since the allocator was made
  MemoryCounters after;  ///< counters after the event
  int32_t opId;          ///< index into CachingAllocator::opNames(), the op that caused it
};

/// What one allocation is: who made it, what it is called, how big it is.
struct AllocationRecord {
  int64_t id = 0;
  std::string label;           ///< a name a person understands: "c[q]", "out", "grad of c"
  int32_t opId = 0;            ///< the op that made it ("index", "bmm", "cat")
  int64_t requestedBytes = 0;  ///< what the op asked for
  int64_t blockBytes = 0;      ///< what memory_allocated counts (rounded, maybe unsplit)
  bool small = false;          ///< small pool (<= 1 MiB) or large pool
  bool alive = true;
  /// What it holds: the allocator's default category when it was made (CategoryScope), or
  /// what the code that made it said since (CachingAllocator::setCategory).
  MemoryCategory category = MemoryCategory::Other;
  /// Freed before the op call that made it returned (PyTorch's memory profiler calls such a
  /// block a temporary: torch/profiler/_memory_profiler.py, Category.TEMPORARY).
  bool freedInItsOp = false;
  int64_t opCall = 0;  ///< which call of an op made it (0: none; CachingAllocator::pushOp)
};

}  // namespace matmulviz
