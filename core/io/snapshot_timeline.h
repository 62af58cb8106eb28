#pragma once
// A PyTorch memory snapshot's trace as a matmulviz memory timeline (core/report/
// strategies_report.h MemoryTimeline), so that the Memory view draws it as it draws a run:
// active memory over time, the peak marked, every event in the table. Qt-free.
//
// As PyTorch's viewer (memory_viz "Active Memory Timeline") reads a trace:
//  - 'alloc' adds a block, 'free_completed' removes it ('free_requested' only marks it pending:
//    the memory is still in use until it completes);
//  - blocks alive before the recording started are placed at time 0: those freed during the
//    trace without an 'alloc' in it (their allocation fell out of the ring buffer), and the
//    segments' active blocks at the snapshot that the trace never allocated;
//  - 'segment_alloc'/'segment_map' add to reserved, 'segment_free'/'segment_unmap' subtract;
//    what the segments held at the start (reserved at the snapshot minus the trace's net change)
//    is one segment event at time 0; 'oom' is kept with the requested size; 'snapshot' is skipped.
// Times are microseconds since the first event (time_us, PyTorch 2.2 and later); a trace without
// times (2.0, 2.1) uses the event's index as its time. Each block's label is its labelFrame
// ("train.py:42", the program's line), its op the innermost dispatcher op of a C++ stack
// ("index_Tensor") or that frame's Python function, its category what its frames and its
// lifetime say (core/io/snapshot_categories.h).

#include "core/io/memory_snapshot.h"
#include "core/report/strategies_report.h"

#include <cstddef>

namespace matmulviz::snapshot {

/// The timeline of device `device` (an index of snapshot.traces; a device without a trace gives
/// only its blocks alive at time 0). Sizes in bytes. Never throws for a snapshot that
/// readMemorySnapshot accepted; an 'alloc' at an address still alive first ends the earlier
/// block (its 'free_completed' is missing from the trace).
MemoryTimeline toMemoryTimeline(const MemorySnapshot& snapshot, size_t device);

/// A block alive before the trace began (placed at time 0): freed in the trace without an
/// 'alloc' there, or active in a segment at the snapshot and never allocated in the trace.
/// Bytes; in the order the timeline allocates them.
struct InitialBlock {
  int64_t addr = 0, size = 0, requested = 0;
  StackId stack = 0;
};
std::vector<InitialBlock> initialBlocks(const MemorySnapshot& snapshot, size_t device);
/// Bytes the device's segments held when the trace began: reserved at the snapshot minus the
/// trace's net segment change, at least 0.
int64_t reservedAtStart(const MemorySnapshot& snapshot, size_t device);

/// The frame that names a block's place in the program (an index of snapshot.frames), from
/// `frames` (a stack, innermost first; not empty): the innermost Python frame (the program's
/// line, or torch's Python code it called); in a stack without one, the innermost frame with a
/// source file that is not the recorder's, the allocator's or the dispatcher's machinery
/// (core/io/snapshot_frames.h isMachineryFrame: never "gather_with_cpp() in
/// memory_snapshot.cpp"), then the innermost such frame without a file, then the innermost.
/// What the timeline's labels use; its ops are core/io/snapshot_frames.h opName.
uint32_t labelFrame(const MemorySnapshot& snapshot, const std::vector<uint32_t>& frames);

/// The devices worth showing: those with trace events or segments, in index order, at most
/// kMaxDevices of them (a process sees a few GPUs; the bound keeps a crafted file with a million
/// one-segment devices from costing a million passes over its segments).
constexpr size_t kMaxDevices = 64;
std::vector<size_t> devicesWithMemory(const MemorySnapshot& snapshot);

}  // namespace matmulviz::snapshot
