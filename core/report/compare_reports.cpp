#include "core/report/compare_reports.h"

#include <algorithm>
#include <filesystem>

namespace matmulviz {

namespace {

std::string quoted(const std::string& file) {
  return "'" + file + "'";
}

/// Why `side` has no timeline, and what to rerun.
std::string noTimelineNote(const CompareSide& side) {
  if (!side.noTimelineNote.empty()) return side.noTimelineNote;
  if (side.report)
    return quoted(side.file) +
           " has no memory timeline: rerun it with `matmulviz-cli strategies ... --json " +
           side.file + " --timeline trace.json` (the timeline goes into the report too)";
  return quoted(side.file) + " has no memory timeline";
}

const MemoryTimeline* findTimeline(const CompareSide& side, const std::string& name) {
  for (const auto& [n, t] : side.timelines)
    if (n == name) return t;
  return nullptr;
}

ComparedTimeline pair(const std::string& nameA, const MemoryTimeline* a, const std::string& nameB,
                      const MemoryTimeline* b) {
  ComparedTimeline c;
  c.name = nameA == nameB ? nameA : nameA + " vs " + nameB;
  c.nameA = nameA, c.nameB = nameB;
  c.a = a, c.b = b;
  c.difference = compareTimelines(*a, *b);
  return c;
}

void pairTimelines(const CompareSide& a, const CompareSide& b, ReportComparison& out) {
  if (a.timelines.size() == 1 && b.timelines.size() == 1) {
    const auto& [na, ta] = a.timelines.front();
    const auto& [nb, tb] = b.timelines.front();
    out.timelines.push_back(pair(na, ta, nb, tb));
    return;
  }
  for (const auto& [name, t] : a.timelines)
    if (const MemoryTimeline* other = findTimeline(b, name))
      out.timelines.push_back(pair(name, t, name, other));
  if (out.timelines.empty() && !a.timelines.empty() && !b.timelines.empty())
    out.notes.push_back("the timelines of " + quoted(a.file) + " and " + quoted(b.file) +
                        " have no name in common, so none is compared");
}

}  // namespace

CompareSide compareSide(const LoadedReport& loaded, const std::string& file) {
  CompareSide side;
  side.file = file;
  if (loaded.kind == "strategies") {
    side.report = &loaded.report;
    for (const StrategyRun& run : loaded.report.runs)
      if (!run.timeline.events.empty()) side.timelines.emplace_back(run.strategy, &run.timeline);
  } else if (loaded.python) {
    side.timelines.emplace_back(file, &loaded.python->timeline);
  }
  return side;
}

ReportComparison compareReports(const CompareSide& a, const CompareSide& b) {
  ReportComparison out;
  out.fileA = a.file, out.fileB = b.file;
  if (a.report && b.report) {
    out.hasStrategies = true;
    out.strategies = compareStrategies(*a.report, *b.report);
  }
  for (const CompareSide* side : {&a, &b})
    if (side->timelines.empty()) out.notes.push_back(noTimelineNote(*side));
  pairTimelines(a, b, out);
  if (!out.hasStrategies && out.timelines.empty()) {
    std::string why = "nothing to compare between " + quoted(a.file) + " and " + quoted(b.file) +
                      ": they are not both strategies reports and have no memory timelines to "
                      "pair";
    for (const std::string& note : out.notes) why += "; " + note;
    throw CompareError(why);
  }
  return out;
}

ReportComparison compareReportFiles(const std::string& pathA, const std::string& pathB,
                                    std::pair<LoadedReport, LoadedReport>& keep) {
  keep.first = readReportFile(pathA);
  keep.second = readReportFile(pathB);
  std::string nameA = std::filesystem::path(pathA).filename().string();
  std::string nameB = std::filesystem::path(pathB).filename().string();
  if (nameB == nameA) nameA += " (A)", nameB += " (B)";  // two files of one name, two folders
  return compareReports(compareSide(keep.first, nameA), compareSide(keep.second, nameB));
}

}  // namespace matmulviz
