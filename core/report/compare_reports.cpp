#include "core/report/compare_reports.h"

#include "core/io/memory_snapshot.h"
#include "core/io/snapshot_store.h"
#include "core/io/snapshot_timeline.h"
#include "core/report/python_report.h"
#include "core/report/record_mark_timeline.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

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
                      const MemoryTimeline* b, const CompareSide& sideA, const CompareSide& sideB) {
  ComparedTimeline c;
  c.startA = sideA.timelineStart, c.startB = sideB.timelineStart;
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
    out.timelines.push_back(pair(na, ta, nb, tb, a, b));
    return;
  }
  for (const auto& [name, t] : a.timelines)
    if (const MemoryTimeline* other = findTimeline(b, name))
      out.timelines.push_back(pair(name, t, name, other, a, b));
  if (out.timelines.empty() && !a.timelines.empty() && !b.timelines.empty())
    out.notes.push_back("the timelines of " + quoted(a.file) + " and " + quoted(b.file) +
                        " have no name in common, so none is compared");
}

/// Pairs the sequences: one on each side, whatever their names; else the i-th with the i-th
/// when both sides have as many (the devices of two snapshots).
void pairSequences(const CompareSide& a, const CompareSide& b, ReportComparison& out) {
  if (a.sequences.empty() || b.sequences.empty()) return;
  if (a.sequences.size() != b.sequences.size()) {
    out.notes.push_back(quoted(a.file) + " has " + std::to_string(a.sequences.size()) +
                        " devices and " + quoted(b.file) + " " +
                        std::to_string(b.sequences.size()) +
                        ": their allocation sequences are not aligned");
    return;
  }
  for (size_t k = 0; k < a.sequences.size(); ++k) {
    ComparedSequence c;
    c.a = a.sequences[k], c.b = b.sequences[k];
    c.name = c.a->name == c.b->name ? c.a->name : c.a->name + " vs " + c.b->name;
    c.alignment = alignSequences(*c.a, *c.b);
    out.sequences.push_back(std::move(c));
  }
}

}  // namespace

void compareFromRecordMark(CompareSide& side, const std::string& name,
                           const MemoryTimeline& fromMark) {
  side.timelines = {{name, &fromMark}};
  side.timelineStart = kRecordMarkStart;
}

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
    if (side->timelines.empty() && side->sequences.empty())
      out.notes.push_back(noTimelineNote(*side));
  pairTimelines(a, b, out);
  pairSequences(a, b, out);
  if (!out.hasStrategies && out.timelines.empty() && out.sequences.empty()) {
    std::string why = "nothing to compare between " + quoted(a.file) + " and " + quoted(b.file) +
                      ": they are not both strategies reports and have no memory timelines to "
                      "pair";
    for (const std::string& note : out.notes) why += "; " + note;
    throw CompareError(why);
  }
  return out;
}

CompareInput readCompareInput(const std::string& path, const std::string& name) {
  CompareInput in;
  if (snapshot::looksLikeSnapshotFile(path)) {
    const snapshot::MemorySnapshot snap = snapshot::readMemorySnapshot(path);
    const bool onDisk = snap.eventCount() > snapshot::kStoreAboveEvents;
    for (const size_t d : snapshot::devicesWithMemory(snap)) {
      const std::string device = "cuda:" + std::to_string(d);
      if (!onDisk) in.snapshotTimelines.emplace_back(device, snapshot::toMemoryTimeline(snap, d));
      in.sequences.push_back(sequenceOfSnapshot(snap, d, name + " " + device));
    }
    if (onDisk)
      in.note = quoted(name) + " has more than " + std::to_string(snapshot::kStoreAboveEvents) +
                " events: compared event by event only (no peaks by label)";
    return in;
  }
  std::string fileName;  // readReportText says why a file cannot be read
  const std::string text = readReportText(path, fileName);
  const nlohmann::json doc = parseReportJson(text, name);
  in.report = readReport(doc, name);
  if (in.report.kind == "python") {
    in.python = readPythonReport(doc, name);
    in.sequences.push_back(sequenceOfPythonReport(*in.python, name));
  }
  return in;
}

CompareSide compareSide(const CompareInput& input, const std::string& file) {
  CompareSide side;
  if (input.fromRecordMark) {
    side.file = file;
    compareFromRecordMark(side, file, *input.fromRecordMark);
  } else if (!input.report.kind.empty()) {
    side = compareSide(input.report, file);
  } else {
    side.file = file;
    for (const auto& [name, t] : input.snapshotTimelines) side.timelines.emplace_back(name, &t);
  }
  for (const AllocationSequence& s : input.sequences) side.sequences.push_back(&s);
  return side;
}

ReportComparison compareReportFiles(const std::string& pathA, const std::string& pathB,
                                    std::pair<CompareInput, CompareInput>& keep) {
  std::string nameA = std::filesystem::path(pathA).filename().string();
  std::string nameB = std::filesystem::path(pathB).filename().string();
  if (nameB == nameA) nameA += " (A)", nameB += " (B)";  // two files of one name, two folders
  keep.first = readCompareInput(pathA, nameA);
  keep.second = readCompareInput(pathB, nameB);
  // A Python run beside a snapshot: both timelines start where the recording started.
  for (auto [run, other] : {std::pair{&keep.first, &keep.second}, {&keep.second, &keep.first}})
    if (run->python && run->report.python && other->report.kind.empty())
      run->fromRecordMark = timelineFromRecordMark(*run->python, run->report.python->timeline);
  ReportComparison c =
      compareReports(compareSide(keep.first, nameA), compareSide(keep.second, nameB));
  for (const CompareInput* in : {&keep.first, &keep.second})
    if (!in->note.empty()) c.notes.push_back(in->note);
  return c;
}

}  // namespace matmulviz
