#pragma once
// The replay behind core/io/allocator_state.h and core/io/allocator_history.h: the allocator's
// segments and active blocks by address, undone one trace event at a time (the rule is in
// allocator_state.h), and a flat copy of it for checkpoints. Internal to core/io.

#include "core/io/allocator_state.h"

#include <map>
#include <utility>

namespace matmulviz::snapshot::detail {

struct LiveBlock {
  int64_t size = 0;
  int64_t requested = 0;
  StackId stack = 0;
  bool pendingFree = false;
};

struct LiveSegment {
  int64_t size = 0;
  int64_t stream = 0;
  int64_t poolId[2] = {0, 0};
  StackId stack = 0;
  bool large = false, expandable = false, fromTrace = false;
};

class Replay {
 public:
  /// The snapshot's segments of `device` and their active blocks.
  static Replay fromSnapshot(const MemorySnapshot& snapshot, size_t device);

  /// Undoes event `x` of `trace` (bounds checked by the caller).
  void undo(const DeviceTrace& trace, size_t x);
  /// The state as the public type, labelled as following trace event `event`.
  AllocatorState materialize(int64_t event) const;

  std::map<int64_t, LiveSegment> segments;  ///< by address
  std::map<int64_t, LiveBlock> blocks;      ///< active blocks by address
  std::array<int64_t, kReplayProblemCount> problems{};

 private:
  void count(ReplayProblem p) { ++problems[static_cast<size_t>(p)]; }
  bool overlaps(int64_t address, int64_t size) const;
  void addSegment(int64_t address, int64_t size, LiveSegment seg, bool merge);
  void cutSegment(int64_t address, int64_t size);
};

/// A Replay as two sorted arrays: a checkpoint (about 32 bytes a block, 64 a segment, against
/// about 80 and 100 in the maps).
struct FlatReplay {
  std::vector<std::pair<int64_t, LiveBlock>> blocks;
  std::vector<std::pair<int64_t, LiveSegment>> segments;
  std::array<int64_t, kReplayProblemCount> problems{};

  static FlatReplay of(const Replay& r);
  Replay restore() const;
  size_t bytes() const;
};

}  // namespace matmulviz::snapshot::detail
