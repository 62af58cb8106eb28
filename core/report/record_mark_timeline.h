#pragma once
// Where a Python run's recording starts, and its memory timeline from there, laid out as a
// PyTorch snapshot's timeline is (core/io/snapshot_timeline.h). A script run on matmulviz calls
// torch.cuda.memory._record_memory_history() where the real program started recording, which
// leaves a mark (kRecordMark, core/report/allocation_sequence.h) in its report; a snapshot's trace
// starts there, and what was alive before counts as its starting state. Cut at the mark, the two
// number their events alike, so charts of a run and of the real snapshot of the same program
// share an x axis (the Compare window's Memory page, `matmulviz-cli compare RUN SNAPSHOT`).
// Qt-free.

#include "core/report/python_report.h"
#include "core/report/strategies_report.h"

#include <cstddef>
#include <optional>

namespace matmulviz {

/// The number of the report's events before its first record mark (the index of the first
/// event after it); nullopt when the report has no such mark with an event count.
std::optional<size_t> recordMarkStart(const PythonReport& report);

/// The number of the report's events before its first dump mark (kDumpMark: the script called
/// torch.cuda.memory._dump_snapshot(), where the real program's snapshot ends) at or after
/// `start`; nullopt when there is none.
std::optional<size_t> dumpMarkEnd(const PythonReport& report, size_t start);

/// `run` (the report's timeline, one event per report event: pythonRunFromReport) from event
/// `start` on, as a snapshot's timeline starts: one SegmentAlloc of the memory reserved then
/// (when any), an Alloc at time 0 for each block alive then (in the order they were allocated,
/// with the counters building up to the state at `start`), then the events from `start` on,
/// their times counted from the first of them, up to event `end` (exclusive). Records, labels
/// and reasons are kept; op spans that ended before `start` are dropped and the others shifted.
/// `start` past the end gives the state at the end and no later event.
MemoryTimeline timelineFromEvent(const MemoryTimeline& run, size_t start,
                                 size_t end = static_cast<size_t>(-1));

/// timelineFromEvent at the report's record mark, up to its dump mark after it when there is
/// one; nullopt when it has no record mark.
std::optional<MemoryTimeline> timelineFromRecordMark(const PythonReport& report,
                                                     const MemoryTimeline& run);

}  // namespace matmulviz
