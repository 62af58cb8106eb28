#pragma once
// Two opened files, compared: what each holds (a strategies report's runs and their timelines, a
// Python run's or a snapshot's timelines), which timelines pair up, and why something cannot be
// compared, in words that say what to rerun. Qt-free: `matmulviz-cli compare` and the app's
// Compare window both build a ReportComparison here.

#include "core/report/compare.h"
#include "core/report/report_load.h"
#include "core/report/sequence_alignment.h"

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace matmulviz {

/// Two files that cannot be compared; what() names the files and says what to rerun.
class CompareError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// One side of a comparison: the file's name (for messages, without its folder), its strategies
/// report when it is one, and its memory timelines by name (a strategy, a script, a device).
/// The pointers must outlive the comparison that reads them.
struct CompareSide {
  std::string file;
  const StrategiesReport* report = nullptr;
  std::vector<std::pair<std::string, const MemoryTimeline*>> timelines;
  /// Said when `timelines` is empty, instead of the default (which tells a strategies report to
  /// rerun with --timeline): e.g. why an app's run kept no timeline.
  std::string noTimelineNote;
  /// Allocation sequences to align event by event (a Python run's, a snapshot device's), named
  /// as their timelines; a snapshot kept on disk has these and no `timelines`.
  std::vector<const AllocationSequence*> sequences;
  /// Where its timelines start when not at their beginning, in words: a Python run's beside a
  /// snapshot starts at its record mark (kRecordMarkStart).
  std::string timelineStart;
};

/// CompareSide::timelineStart of a Python run's timeline cut at its record mark.
inline constexpr const char* kRecordMarkStart =
    "from its script's torch.cuda.memory._record_memory_history()";

/// Makes `fromMark` (a Python run's timeline cut at its record mark, timelineFromRecordMark), named
/// `name`, the one timeline `side` compares, and says where it starts (kRecordMarkStart). The
/// timeline must outlive the side.
void compareFromRecordMark(CompareSide& side, const std::string& name,
                           const MemoryTimeline& fromMark);

/// The side of a loaded report: kind "strategies" gives its report and the timeline of each run
/// that recorded one (by strategy name); kind "python" gives its one timeline, named `file`.
/// `loaded` must outlive the side.
CompareSide compareSide(const LoadedReport& loaded, const std::string& file);

/// One pair of timelines and their difference.
struct ComparedTimeline {
  std::string name;          ///< the strategy, or "nameA vs nameB" when the names differ
  std::string nameA, nameB;  ///< each side's name of it
  const MemoryTimeline* a = nullptr;
  const MemoryTimeline* b = nullptr;
  TimelineComparison difference;
  std::string startA, startB;  ///< CompareSide::timelineStart of each side (empty: whole)
};

/// One pair of allocation sequences aligned event by event.
struct ComparedSequence {
  std::string name;  ///< "nameA vs nameB", or the name both have
  const AllocationSequence* a = nullptr;
  const AllocationSequence* b = nullptr;
  SequenceAlignment alignment;
};

struct ReportComparison {
  std::string fileA, fileB;
  bool hasStrategies = false;       ///< both sides are strategies reports
  StrategiesComparison strategies;  ///< when hasStrategies
  /// Timelines of the same name on both sides, in A's order; when each side has exactly one
  /// timeline, those two whatever their names (two Python runs, two snapshots of one device).
  std::vector<ComparedTimeline> timelines;
  /// Sequences aligned event by event: when each side has exactly one, those two; else those of
  /// the same name.
  std::vector<ComparedSequence> sequences;
  /// What is missing, and what to rerun: "'a.json' has no memory timeline: rerun it with
  /// `matmulviz-cli strategies ... --json a.json --timeline t.json`".
  std::vector<std::string> notes;
};

/// Compares `a` with `b` (B - A). Throws CompareError, naming both files, when there is nothing
/// to compare: neither two strategies reports nor a pair of timelines or sequences (e.g. a
/// strategies report without timelines beside a Python run: the message says to rerun the
/// report with --timeline).
ReportComparison compareReports(const CompareSide& a, const CompareSide& b);

/// A file read for a comparison: a matmulviz report, or a PyTorch memory snapshot (a pickle,
/// torch.cuda.memory._dump_snapshot). What its CompareSide points into.
struct CompareInput {
  LoadedReport report;                 ///< a report file
  std::optional<PythonReport> python;  ///< a report of kind "python", for its sequence
  /// A snapshot's timelines by device ("cuda:0"); none above snapshot::kStoreAboveEvents
  /// events (such a snapshot is compared by its sequences only, as the app does with one kept
  /// on disk).
  std::vector<std::pair<std::string, MemoryTimeline>> snapshotTimelines;
  std::vector<AllocationSequence> sequences;
  std::string note;  ///< said beside the comparison
  /// A Python run's timeline from its record mark on (core/report/record_mark_timeline.h), set
  /// when the other side is a snapshot, so that both timelines start where the recording did.
  std::optional<MemoryTimeline> fromRecordMark;
};

/// Reads the report or snapshot at `path` (told apart by the first byte: a pickle starts with
/// 0x80), named `name` in messages and sequences. Throws ReportLoadError for a report and
/// snapshot::SnapshotError (or pickle::PickleError) for a snapshot that cannot be read, each
/// naming the file.
CompareInput readCompareInput(const std::string& path, const std::string& name);

/// The side of a read input (compareSide for a report, plus its sequences).
CompareSide compareSide(const CompareInput& input, const std::string& file);

/// The same on two files (readCompareInput, then compareSide). Throws ReportLoadError or
/// snapshot::SnapshotError naming the file that cannot be read, and CompareError as
/// compareReports. The inputs are kept in `keep` (the comparison points into them).
ReportComparison compareReportFiles(const std::string& pathA, const std::string& pathB,
                                    std::pair<CompareInput, CompareInput>& keep);

}  // namespace matmulviz
