#pragma once
// A PyTorch memory snapshot's timelines written into an on-disk store (core/io/timeline_store.h)
// instead of MemoryTimelines in memory: for snapshots of millions of events. The events and
// counters are those toMemoryTimeline (core/io/snapshot_timeline.h) gives, in the same order:
// blocks alive before the recording at time 0, 'alloc' adds, 'free_completed' removes, segments
// change reserved, 'oom' kept, 'free_requested' and 'snapshot' skipped. Qt-free.

#include "core/io/memory_snapshot.h"

#include <cstddef>
#include <string>

namespace matmulviz::snapshot {

/// Snapshots with more trace events than this open through a store (a MemoryTimeline holds
/// about 100 bytes an event plus a label per block; the store holds a screen's worth).
inline constexpr size_t kStoreAboveEvents = 1'000'000;

/// Writes each device of devicesWithMemory(snapshot), named "cuda:<index>", and every stack's
/// innermost frame to a new store at `path`. `options.progress(done, total)` reports events
/// written out of all events; `options.cancel` stops it with pickle::Cancelled (the file is
/// removed). Throws store::StoreError when the file cannot be written.
void writeSnapshotStore(const MemorySnapshot& snapshot, const std::string& path,
                        const LoadOptions& options = {});

}  // namespace matmulviz::snapshot
