#pragma once
// The allocator state (core/io/allocator_state.h) at any trace event of one device of a PyTorch
// memory snapshot, fast enough to scrub: one backward replay over the whole trace at
// construction keeps a checkpoint (the state as sorted arrays) after every `interval`-th event;
// a query restores the nearest checkpoint at or after the event and undoes at most interval - 1
// events from it. The result is exactly snapshot::stateAfter's (the same undo from the same
// start). Checkpoints share a memory budget: when they would exceed it, every other one is
// dropped and the interval doubles, so memory stays bounded on a trace whose state keeps
// growing, at the price of a longer replay per query. Qt-free.
//
// It also maps the rows of the snapshot's timeline (toMemoryTimeline, writeSnapshotStore: the
// Memory view's events) to trace events, since the timeline skips 'free_requested' and
// 'snapshot', adds the blocks alive before the recording, and may add a 'free' before an
// 'alloc' at an address still alive.

#include "core/io/allocator_replay.h"

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

namespace matmulviz::snapshot {

class AllocatorHistory {
 public:
  static constexpr size_t kCheckpointInterval = 65536;                 ///< events
  static constexpr size_t kCheckpointBudgetBytes = size_t{256} << 20;  ///< all checkpoints

  /// Replays `device`'s trace of `snapshot` (kept, shared) once: O(events x log blocks) time.
  /// Never throws for a snapshot readMemorySnapshot accepted (an inconsistent trace gives
  /// states with notes, AllocatorState::notes).
  AllocatorHistory(std::shared_ptr<const MemorySnapshot> snapshot, size_t device,
                   size_t interval = kCheckpointInterval,
                   size_t budgetBytes = kCheckpointBudgetBytes);

  const MemorySnapshot& snapshot() const { return *snapshot_; }
  size_t device() const { return device_; }
  /// Trace events of the device (0 when it has no trace).
  int64_t eventCount() const { return events_; }
  /// The state just after trace event `event`; -1 before the first; clamped to [-1, count-1].
  AllocatorState stateAfter(int64_t event) const;

  size_t checkpointInterval() const { return interval_; }
  size_t checkpointCount() const { return checkpoints_.size(); }
  size_t checkpointBytes() const { return bytes_; }

  /// Rows of the device's timeline (toMemoryTimeline(snapshot, device).events.size()).
  int64_t timelineEventCount() const { return static_cast<int64_t>(traceOfRow_.size()); }
  /// The trace event that timeline row `row` comes from; -1 for the rows placed at time 0
  /// (segments and blocks alive before the recording) and for a row out of range.
  int64_t traceEventOfTimelineRow(int64_t row) const;
  /// The last timeline row that comes from trace event `event` or one before it; -1 when none.
  int64_t timelineRowOfTraceEvent(int64_t event) const;

 private:
  void keep(int64_t event, const detail::Replay& r);

  std::shared_ptr<const MemorySnapshot> snapshot_;
  size_t device_ = 0;
  int64_t events_ = 0;
  size_t interval_ = kCheckpointInterval;
  size_t budget_ = kCheckpointBudgetBytes;
  size_t bytes_ = 0;
  std::map<int64_t, detail::FlatReplay> checkpoints_;  ///< by the event the state follows
  std::vector<uint32_t> traceOfRow_;                   ///< trace event + 1; 0: at time 0
};

/// For each row of toMemoryTimeline(snapshot, device): the trace event it comes from plus one,
/// 0 for the rows at time 0. Follows snapshot_timeline.cpp's walk (tests check the two agree).
std::vector<uint32_t> timelineTraceEvents(const MemorySnapshot& snapshot, size_t device);

}  // namespace matmulviz::snapshot
