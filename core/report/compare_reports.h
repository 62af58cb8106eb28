#pragma once
// Two opened files, compared: what each holds (a strategies report's runs and their timelines, a
// Python run's or a snapshot's timelines), which timelines pair up, and why something cannot be
// compared, in words that say what to rerun. Qt-free: `matmulviz-cli compare` and the app's
// Compare window both build a ReportComparison here.

#include "core/report/compare.h"
#include "core/report/report_load.h"

#include <memory>
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
};

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
};

struct ReportComparison {
  std::string fileA, fileB;
  bool hasStrategies = false;       ///< both sides are strategies reports
  StrategiesComparison strategies;  ///< when hasStrategies
  /// Timelines of the same name on both sides, in A's order; when each side has exactly one
  /// timeline, those two whatever their names (two Python runs, two snapshots of one device).
  std::vector<ComparedTimeline> timelines;
  /// What is missing, and what to rerun: "'a.json' has no memory timeline: rerun it with
  /// `matmulviz-cli strategies ... --json a.json --timeline t.json`".
  std::vector<std::string> notes;
};

/// Compares `a` with `b` (B - A). Throws CompareError, naming both files, when there is nothing
/// to compare: neither two strategies reports nor a pair of timelines (e.g. a strategies report
/// without timelines beside a Python run: the message says to rerun the report with --timeline).
ReportComparison compareReports(const CompareSide& a, const CompareSide& b);

/// The same on two report files (readReportFile, then compareSide). Throws ReportLoadError
/// naming the file that cannot be read, and CompareError as compareReports. The loaded reports
/// are kept in `keep` (the comparison points into them).
ReportComparison compareReportFiles(const std::string& pathA, const std::string& pathB,
                                    std::pair<LoadedReport, LoadedReport>& keep);

}  // namespace matmulviz
