#include "ui/models/compared_files.h"

#include "core/io/timeline_store.h"
#include "core/report/record_mark_timeline.h"
#include "core/tensor/dtype.h"
#include "ui/models/snapshot_allocations.h"

namespace matmulviz::ui {

namespace {

std::string str(const QString& s) {
  return s.toStdString();
}

/// The allocation sequences of an opened file, named `name` (and the device of a snapshot).
std::shared_ptr<const std::vector<AllocationSequence>> sequencesOf(const OpenedFile& f,
                                                                   const std::string& name) {
  auto out = std::make_shared<std::vector<AllocationSequence>>();
  if (f.pythonReport) {
    out->push_back(sequenceOfPythonReport(*f.pythonReport, name));
  } else if (f.store) {
    for (size_t d = 0; d < f.store->devices().size(); ++d)
      out->push_back(sequenceOfStore(*f.store, d, name + " " + f.store->devices()[d].name));
  } else if (f.allocations && f.allocations->snapshot) {
    for (const SnapshotAllocations::Device& d : f.allocations->devices)
      out->push_back(
          sequenceOfSnapshot(*f.allocations->snapshot, d.index, name + " " + str(d.name)));
  }
  return out;
}

/// A Python run's timeline from its record mark on, when `other` is a snapshot; else null.
std::shared_ptr<const MemoryTimeline> fromRecordMark(const OpenedFile& run,
                                                     const OpenedFile& other) {
  if (!run.pythonReport || !run.timelines || run.timelines->size() != 1 ||
      other.kind != FileKind::Snapshot)
    return nullptr;
  auto t = timelineFromRecordMark(*run.pythonReport, run.timelines->front().timeline);
  return t ? std::make_shared<const MemoryTimeline>(std::move(*t)) : nullptr;
}

/// The side of an opened file; throws CompareError for a kind that holds no memory to compare.
/// `fromMark`, when given, stands for a Python run's timeline.
CompareSide sideOf(const OpenedFile& f, const std::string& name,
                   const std::vector<AllocationSequence>& sequences,
                   const MemoryTimeline* fromMark) {
  CompareSide side;
  side.file = name;
  for (const AllocationSequence& s : sequences) side.sequences.push_back(&s);
  if (fromMark) {
    compareFromRecordMark(side, str(f.timelines->front().name), *fromMark);
    return side;
  }
  if (f.store) {
    side.noTimelineNote = "'" + side.file +
                          "' is a snapshot kept on disk (more than a million events): compared "
                          "event by event only";
    return side;
  }
  if (f.report) {
    side.report = f.report.get();
    for (const StrategyRun& run : f.report->runs)
      if (!run.timeline.events.empty()) side.timelines.emplace_back(run.strategy, &run.timeline);
  } else if (f.timelines) {
    for (const NamedTimeline& t : *f.timelines)
      side.timelines.emplace_back(str(t.name), &t.timeline);
  } else {
    throw CompareError("'" + side.file +
                       "' is not a report or a memory snapshot: compare reports "
                       "(matmulviz-cli strategies --json r.json --timeline t.json), Python "
                       "runs' reports or PyTorch memory snapshots");
  }
  return side;
}

CompareSide sideOfRun(const QString& name, const StrategiesReport& report, bool kept) {
  CompareSide side;
  side.file = str(name);
  side.report = &report;
  for (const StrategyRun& run : report.runs)
    if (!run.timeline.events.empty()) side.timelines.emplace_back(run.strategy, &run.timeline);
  if (!kept)
    side.noTimelineNote = side.file +
                          " has no memory timeline here (a run of an earlier session keeps only "
                          "its numbers): run it again, or open its report, to compare its memory";
  return side;
}

QString runName(const RunEntry& e) {
  return e.title.isEmpty() ? QStringLiteral("run #%1").arg(e.id)
                           : QStringLiteral("run #%1 (%2)").arg(e.id).arg(e.title);
}

}  // namespace

std::shared_ptr<const ComparedFiles> compareOpenedFiles(const OpenedFile& a, const OpenedFile& b) {
  auto out = std::make_shared<ComparedFiles>();
  out->nameA = a.fileName, out->nameB = b.fileName;
  out->reportA = a.report, out->reportB = b.report;
  out->timelinesA = a.timelines, out->timelinesB = b.timelines;
  std::string nameA = str(a.fileName), nameB = str(b.fileName);
  if (nameA == nameB) nameA += " (A)", nameB += " (B)";
  out->sequencesA = sequencesOf(a, nameA);
  out->sequencesB = sequencesOf(b, nameB);
  out->fromRecordMarkA = fromRecordMark(a, b);
  out->fromRecordMarkB = fromRecordMark(b, a);
  const CompareSide sa = sideOf(a, nameA, *out->sequencesA, out->fromRecordMarkA.get());
  const CompareSide sb = sideOf(b, nameB, *out->sequencesB, out->fromRecordMarkB.get());
  out->nameA = QString::fromStdString(sa.file), out->nameB = QString::fromStdString(sb.file);
  out->comparison = compareReports(sa, sb);
  for (const auto& [f, name] : {std::pair{&a, &nameA}, std::pair{&b, &nameB}})
    if (f->store)
      out->comparison.notes.push_back(
          "'" + *name +
          "' is a snapshot kept on disk (more than a million events): compared event by event "
          "only, without its peaks by label");
  return out;
}

StrategiesReport reportFromEntry(const RunEntry& e) {
  StrategiesReport r;
  const QJsonObject& w = e.workload;
  auto size = [&](const char* key, int64_t fallback) {
    return w.contains(key) ? int64_t(w.value(key).toDouble()) : fallback;
  };
  r.workload.n = size("n", r.workload.n), r.workload.m = size("m", r.workload.m);
  r.workload.i = size("i", r.workload.i), r.workload.j = size("j", r.workload.j);
  r.workload.k = size("k", r.workload.k), r.workload.batch = size("batch", r.workload.batch);
  try {
    if (!e.dtype.isEmpty()) r.workload.dtype = parseDType(str(e.dtype));
    if (!e.device.isEmpty()) r.device = parseDeviceKind(str(e.device));
  } catch (const std::exception&) {  // an entry of a newer version: keep the defaults
  }
  RequiresGrad grad;
  try {
    grad = RequiresGrad::parse(str(e.requiresGrad));
  } catch (const std::exception&) {
  }
  for (const StrategyResult& s : e.results) {
    StrategyRun run;
    run.strategy = str(s.strategy);
    run.requiresGrad = grad;
    run.ok = s.ok;
    run.error = str(s.error);
    run.time.median = s.timeMedianS;
    run.current.allocatedBytes = s.curMemBytes;
    run.peak.allocatedBytes = s.maxMemBytes;
    r.runs.push_back(std::move(run));
  }
  return r;
}

std::shared_ptr<const ComparedFiles> compareRuns(const RunEntry& a,
                                                 std::shared_ptr<const StrategiesReport> reportA,
                                                 const RunEntry& b,
                                                 std::shared_ptr<const StrategiesReport> reportB) {
  auto out = std::make_shared<ComparedFiles>();
  out->nameA = runName(a), out->nameB = runName(b);
  const bool keptA = reportA != nullptr, keptB = reportB != nullptr;
  out->reportA = keptA ? reportA : std::make_shared<const StrategiesReport>(reportFromEntry(a));
  out->reportB = keptB ? reportB : std::make_shared<const StrategiesReport>(reportFromEntry(b));
  out->comparison = compareReports(sideOfRun(out->nameA, *out->reportA, keptA),
                                   sideOfRun(out->nameB, *out->reportB, keptB));
  return out;
}

}  // namespace matmulviz::ui
