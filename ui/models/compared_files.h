#pragma once
// What the app's Compare window shows: two opened files (File > Compare Reports…, `matmulviz
// --compare A B`) or two runs of the history (the Strategies view's "Compare runs"), their
// comparison (core/report/compare_reports.h), and what the comparison points into (kept alive
// here). Qt Core only; built on a worker thread for files.

#include "core/report/compare_reports.h"
#include "ui/models/open_file.h"
#include "ui/models/run_history.h"

#include <QString>

#include <memory>
#include <vector>

namespace matmulviz::ui {

struct ComparedFiles {
  QString nameA, nameB;  ///< "r.json", "run #3 (small)"
  std::shared_ptr<const StrategiesReport> reportA, reportB;
  std::shared_ptr<const std::vector<NamedTimeline>> timelinesA, timelinesB;
  /// The allocation sequences of a Python run's report or a snapshot (in memory or on disk).
  std::shared_ptr<const std::vector<AllocationSequence>> sequencesA, sequencesB;
  /// A Python run's timeline from its record mark on, compared in place of its whole timeline
  /// when the other file is a snapshot (core/report/record_mark_timeline.h); null otherwise.
  std::shared_ptr<const MemoryTimeline> fromRecordMarkA, fromRecordMarkB;
  ReportComparison comparison;
};

/// Compares two files read by loadFile (B - A): strategies reports, Python runs' reports,
/// snapshots held in memory and snapshots kept on disk (OpenedFile::store: compared event by
/// event only, their allocation sequences read from the store). Throws CompareError (named
/// files, what to rerun) when nothing can be compared, or for a file that is neither (a preset,
/// a script, a joint graph); store::StoreError when a store cannot be read.
std::shared_ptr<const ComparedFiles> compareOpenedFiles(const OpenedFile& a, const OpenedFile& b);

/// Compares two runs of the history. `reportA`/`reportB` are the runs' reports when the app still
/// holds them (with their timelines); nullptr for a run of an earlier session, which is compared
/// from its entry (maxMem, curMem, time) with a note that its timeline is not kept.
std::shared_ptr<const ComparedFiles> compareRuns(const RunEntry& a,
                                                 std::shared_ptr<const StrategiesReport> reportA,
                                                 const RunEntry& b,
                                                 std::shared_ptr<const StrategiesReport> reportB);

/// A report with what a history entry keeps: each strategy's ok/error, median time, curMem and
/// maxMem, the workload, device and requires_grad (no timelines, no tensors).
StrategiesReport reportFromEntry(const RunEntry& e);

}  // namespace matmulviz::ui
