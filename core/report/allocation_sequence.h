#pragma once
// A program's allocations and frees in order, with the live totals after each, taken from what
// the tool reads: a Python run's report (`python3 -m matmulviz SCRIPT --report PATH`), a PyTorch
// memory snapshot's trace (torch.cuda.memory._dump_snapshot), or such a snapshot kept in an
// on-disk timeline store. What compare aligns event by event (core/report/sequence_alignment.h).
// Qt-free.
//
// Sizes are the requests' bytes: a snapshot's trace records the size the program asked for on
// 'alloc' and 'free_completed' (the H200 snapshots of tests/reference/gpu/snapshots hold requests
// such as 53759 bytes, not multiples of 512), not the block the allocator handed out, so the one
// total both sides have exactly is the live requests' bytes (requested_bytes.all.current), with
// memory_reserved beside it.
//
// Where a sequence starts: a snapshot's at its trace's first event (the blocks and segments alive
// before the recording are its start totals); a Python run's after its first mark named
// kRecordMark (the script called torch.cuda.memory._record_memory_history() where the real
// program started recording), else at its first event; it ends at the first kDumpMark after
// that (torch.cuda.memory._dump_snapshot()), else at the run's end. Blocks alive at the start count
// in the start totals; their frees later are events of the sequence.

#include "core/io/memory_snapshot.h"
#include "core/report/python_report.h"

#include <cstdint>
#include <string>
#include <vector>

namespace matmulviz {

namespace store {
class TimelineStore;
}

/// The mark torch.cuda.memory._record_memory_history() leaves in a Python run's report.
inline constexpr const char* kRecordMark = "_record_memory_history";
/// The mark torch.cuda.memory._dump_snapshot() leaves: a run's sequence from a record mark ends
/// at the first one after it, where the real program's snapshot ends.
inline constexpr const char* kDumpMark = "_dump_snapshot";

/// One allocation or free, with the totals after it.
struct SequenceEvent {
  bool alloc = true;      ///< false: a free
  int64_t bytes = 0;      ///< the request's bytes
  int64_t requested = 0;  ///< bytes of the live requests after the event
  int64_t reserved = -1;  ///< memory_reserved after the event; -1 when the side has no segments
  /// The event's index in its report's events, its snapshot's trace or its store's timeline.
  int64_t source = 0;
  int32_t site = 0;  ///< index into AllocationSequence::sites: where the block was allocated
};

/// Where a block was allocated: the op or Python function, and the source line.
struct SequenceSite {
  std::string op;     ///< "bmm", "gather_backward"; "(no frames)" when none was recorded
  std::string where;  ///< "train.py:12 `out = a @ b`"; empty when unknown
};

struct AllocationSequence {
  std::string name;  ///< the file, and the device for a snapshot
  std::vector<SequenceEvent> events;
  std::vector<SequenceSite> sites;  ///< sites[0] is the unknown site
  int64_t startRequested = 0;       ///< bytes of requests alive at the start
  int64_t startReserved = -1;       ///< memory_reserved at the start; -1: unknown
  int64_t startBlocks = 0;          ///< blocks alive at the start
  std::string start;                ///< where it starts, in words
  bool hasReserved() const { return startReserved >= 0; }
};

/// The sequence of a Python run's report (see the file comment for its start). Never throws
/// beyond std::bad_alloc for a report readPythonReport accepted.
AllocationSequence sequenceOfPythonReport(const PythonReport& report, const std::string& name);

/// The sequence of device `device` of a snapshot (an index of snapshot.traces). Follows
/// snapshot_timeline.h: 'alloc' adds, 'free_completed' removes ('free_requested' and 'snapshot'
/// are skipped), segment events change reserved; an 'alloc' at an address still alive first
/// frees the block there. Never throws beyond std::bad_alloc.
AllocationSequence sequenceOfSnapshot(const snapshot::MemorySnapshot& snapshot, size_t device,
                                      const std::string& name);

/// The sequence of device `device` (an index of store.devices()) of a snapshot kept in a store
/// (core/io/snapshot_store.h), read a chunk at a time; the same events as sequenceOfSnapshot of
/// the snapshot it was written from. Throws store::StoreError when the store cannot be read.
AllocationSequence sequenceOfStore(const store::TimelineStore& store, size_t device,
                                   const std::string& name);

}  // namespace matmulviz
