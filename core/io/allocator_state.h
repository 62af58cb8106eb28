#pragma once
// The CUDA caching allocator's segments and blocks as they were just after one trace event of a
// PyTorch memory snapshot: what PyTorch's viewer (torch/utils/viz/MemoryViz.js, "Allocator State
// History") draws when an event is selected. Qt-free.
//
// The rule, as MemoryViz.js reconstructs it: start from the snapshot's segments and their active
// blocks (the state after the last trace event) and walk the device's trace backwards from its
// last event down to the one after the selected event, undoing each:
//   alloc            the block did not exist yet: remove it;
//   free_requested   the block was not yet freed: no longer pending free;
//   free_completed   the block was still there, freed but pending: add it back (address, the
//                    event's size as both size and requested size, the event's frames);
//   segment_alloc    the segment did not exist yet: remove the segment at that address;
//   segment_free     the segment existed: add it back;
//   segment_map      an expandable segment had not grown yet: cut the mapped range off the
//                    segment that holds it (from its start, its end, or splitting it in two);
//   segment_unmap    the range was still mapped: add it back, merged with a segment that ends
//                    where it starts or starts where it ends, on the same stream.
// 'oom' and 'snapshot' change nothing. Free space is not in the trace: the inactive (cached)
// blocks are the gaps between active blocks inside a segment, since the allocator merges free
// neighbours (c10/cuda/CUDACachingAllocator.cpp, free_block).
//
// Differences from MemoryViz.js, on purpose: it merges a free_requested immediately followed by
// the free_completed of the same address into one 'free' event; here both stay, so the state
// between them (pending free) is one more index, and every index is the trace's own.
// 'active_awaiting_free' (the name in torch/cuda/memory.py's documentation) is pending free like
// 'active_pending_free' (what the allocator writes); MemoryViz.js knows only the latter. Where
// MemoryViz.js would fail (an event whose block or segment is not there, after a ring buffer
// overflow or in a damaged file), the event is skipped and counted in the state's notes.

#include "core/io/memory_snapshot.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace matmulviz::snapshot {

/// One segment (a cudaMalloc, or an expandable segment's mapped range). Bytes.
struct StateSegment {
  int64_t address = 0;
  int64_t size = 0;
  int64_t stream = 0;
  bool large = false;       ///< large pool ('segment_type'); inferred for one from the trace
  bool expandable = false;  ///< 'is_expandable', or known from a segment_map/unmap
  int64_t poolId[2] = {0, 0};
  StackId stack = 0;       ///< the frames of its cudaMalloc, when recorded
  bool fromTrace = false;  ///< known from a trace event only: pool unknown, 'large' inferred
                           ///< (a 2 MiB segment that is not expandable is small: kSmallBuffer)
};

/// One block inside a segment. Bytes. ActiveAwaitingFree never appears (read as pending free).
struct StateBlock {
  int64_t address = 0;
  int64_t size = 0;           ///< the event's (requested) size for a block known from the trace
  int64_t requestedSize = 0;  ///< 0 for an inactive block
  BlockState state = BlockState::Inactive;
  StackId stack = 0;
  uint32_t segment = 0;  ///< index in AllocatorState::segments
};

/// What could not be undone, counted by kind (see noteText).
enum class ReplayProblem : uint8_t {
  AllocWithoutBlock,          ///< an 'alloc' whose block is not there
  FreeRequestedWithoutBlock,  ///< a 'free_requested' whose block is not there
  FreeCompletedOverBlock,     ///< a 'free_completed' at an address whose block is there
  SegmentAllocWithoutSegment,
  SegmentMapOutsideSegments,  ///< a 'segment_map' whose range no segment holds
  SegmentOverlaps,            ///< a 'segment_free'/'segment_unmap' over a segment: skipped
  BlockOutsideSegments,       ///< a block in no segment, or over another block: not shown
  Count
};
inline constexpr size_t kReplayProblemCount = static_cast<size_t>(ReplayProblem::Count);

struct AllocatorState {
  int64_t event = -1;  ///< the trace event this state follows; -1: before the first one
  std::vector<StateSegment> segments;  ///< by address, not overlapping
  std::vector<StateBlock> blocks;      ///< by address; each segment covered, gaps inactive
  std::array<int64_t, kReplayProblemCount> problems{};  ///< counts, by ReplayProblem

  // Totals, bytes (memory_stats names): reserved is every segment, allocated the allocated
  // blocks, active allocated plus pending free, requested the active blocks' requests.
  int64_t reservedBytes = 0, allocatedBytes = 0, activeBytes = 0, requestedBytes = 0;
  int64_t inactiveBytes = 0;    ///< cached free space: reserved - active
  int64_t largestInactive = 0;  ///< the largest inactive block
  /// External fragmentation, 1 - largest free block / free space (0 without free space).
  double fragmentation() const;
  /// One sentence per kind of problem ("'alloc' events whose block was not there: 3, skipped
  /// (a ring buffer overflow or a damaged trace)."); empty when there was none.
  std::vector<std::string> notes() const;
};

/// The state after the last trace event of `device`: the snapshot's segments of that device and
/// their active blocks (no replay). Never throws for a snapshot readMemorySnapshot accepted.
AllocatorState snapshotState(const MemorySnapshot& snapshot, size_t device);

/// The state just after trace event `event` of `device` (-1: before the first event; an event
/// past the last is the last), replayed backwards from the snapshot: O(events after it x log
/// blocks). AllocatorHistory (core/io/allocator_history.h) answers the same from checkpoints.
AllocatorState stateAfter(const MemorySnapshot& snapshot, size_t device, int64_t event);

}  // namespace matmulviz::snapshot
