#pragma once
// What a block of a PyTorch memory snapshot is, in words, for hover texts: its address, size,
// requested size, when it was allocated and freed, its category from the frames
// (core/io/snapshot_categories.h) and its stack, innermost first, as PyTorch's viewer
// (torch/utils/viz/MemoryViz.js, format_frames) lists it: "filename:line name" per frame (the name
// alone for a C++ frame without a file, "??"),
// without the interpreter's and the dispatcher's plumbing frames it omits, a frame repeated
// in a row written once with "<repeats N times>". Qt-free.

#include "core/io/memory_snapshot.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace matmulviz::snapshot {

/// One block's facts. Bytes; events are indices in the device's trace (-1: none recorded).
struct BlockFacts {
  int64_t addr = 0;
  int64_t size = 0;
  int64_t requested = 0;
  StackId stack = 0;
  int64_t allocEvent = -1;  ///< -1: allocated before the recording started
  int64_t freeEvent = -1;   ///< -1: alive at the end of the trace
};

/// The blocks of toMemoryTimeline(snapshot, device), indexed by AllocationRecord::id: its
/// blocks alive at time 0 (initialBlocks), then one per 'alloc' of the trace; a
/// 'free_completed', or an 'alloc' at the same address, ends the block alive there.
std::vector<BlockFacts> timelineBlocks(const MemorySnapshot& snapshot, size_t device);

/// Microseconds of trace entry `x` since the trace's first timed entry, as toMemoryTimeline
/// places it (x + 1 for a trace without times); -1 for x out of range.
double traceTimeUs(const DeviceTrace& trace, int64_t x);

/// The frames of `stack`, innermost first, one line each, as described above; at most
/// `maxLines` lines (then "... N more frames"). A stack without frames gives one line saying so.
std::string stackText(const MemorySnapshot& snapshot, StackId stack, size_t maxLines = 30);

/// Several lines: "block 0x7f3a00000000: 2.0 MiB (requested 1.9 MiB)", when it was allocated and
/// freed (trace entry and microseconds), its category and why, then stackText.
std::string describeBlock(const MemorySnapshot& snapshot, size_t device, const BlockFacts& block);

}  // namespace matmulviz::snapshot
