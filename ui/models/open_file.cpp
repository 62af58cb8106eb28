#include "ui/models/open_file.h"

#include "core/io/memory_snapshot.h"
#include "core/io/snapshot_store.h"
#include "core/io/snapshot_timeline.h"
#include "core/io/timeline_store.h"
#include "core/partitioner/graph_json.h"
#include "core/report/python_report.h"
#include "core/report/python_run.h"
#include "core/report/report_load.h"
#include "ui/models/budget_explorer.h"
#include "ui/models/snapshot_allocations.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryFile>

#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>

namespace matmulviz::ui {

namespace {

std::runtime_error problem(const QString& fileName, const QString& what) {
  return std::runtime_error(("'" + fileName + "': " + what).toStdString());
}

/// The allocator state at any event of each of the snapshot's devices (it keeps the snapshot),
/// or the reason there is none.
void allocatorHistories(const std::shared_ptr<const snapshot::MemorySnapshot>& shared,
                        OpenedFile& out) {
  if (out.traceEntryCount > kAllocatorStateMaxEvents) {
    out.allocatorNote =
        QStringLiteral(
            "The allocator state at each event is off for snapshots of more than "
            "%L1 trace events (this one has %L2): their trace would stay in memory.")
            .arg(qulonglong(kAllocatorStateMaxEvents))
            .arg(qulonglong(out.traceEntryCount));
    return;
  }
  for (const size_t d : snapshot::devicesWithMemory(*shared))
    out.allocatorHistories.append(std::make_shared<const snapshot::AllocatorHistory>(shared, d));
}

/// The snapshot's devices with memory, each as a timeline.
std::shared_ptr<const std::vector<NamedTimeline>> snapshotTimelines(
    const snapshot::MemorySnapshot& s) {
  auto devices = std::make_shared<std::vector<NamedTimeline>>();
  for (const size_t d : snapshot::devicesWithMemory(s))
    devices->push_back({QStringLiteral("cuda:%1").arg(d), snapshot::toMemoryTimeline(s, d)});
  return devices;
}

/// Which PyTorch ran a simulated script, and the reads of values that returned placeholders
/// (the first three, by line); empty for a report without them.
QString pythonRunNote(const PythonRun& run) {
  QString note;
  if (run.torch)
    note += run.torch->cudaBranches
                ? QStringLiteral(" Run by PyTorch %1, its own code on the GPU's device branches.")
                      .arg(QString::fromStdString(run.torch->version))
                : QStringLiteral(
                      " Run by PyTorch %1, simulated tensors meta tensors to its "
                      "C++ (its CUDA branches did not run).")
                      .arg(QString::fromStdString(run.torch->version));
  if (run.pinnedHost)
    note += QStringLiteral(
                " Pinned host memory (not on the device): peak %1 MiB in use, %2 MiB held "
                "by PyTorch's host cache.")
                .arg(double(run.pinnedHost->peakActiveBytes) / (1 << 20), 0, 'f', 2)
                .arg(double(run.pinnedHost->peakHeldBytes) / (1 << 20), 0, 'f', 2);
  if (run.valueReads.empty()) return note;
  QStringList reads;
  for (size_t i = 0; i < std::min<size_t>(3, run.valueReads.size()); ++i) {
    const PythonValueRead& r = run.valueReads[i];
    reads << QStringLiteral("%1:%2 %3%4")
                 .arg(QFileInfo(QString::fromStdString(r.file)).fileName())
                 .arg(r.line)
                 .arg(QString::fromStdString(r.read),
                      r.count > 1 ? QStringLiteral(" (%1 times)").arg(r.count) : QString());
  }
  if (run.valueReads.size() > 3) reads << QStringLiteral("...");
  return note + QStringLiteral(
                    " %1 read(s) of simulated values returned placeholders, so "
                    "control flow that depends on them may differ: %2.")
                    .arg(run.valueReads.size())
                    .arg(reads.join(QStringLiteral(", ")));
}

/// A Python run's report as one timeline named after its script.
void pythonTimeline(PythonRun& run, OpenedFile& out) {
  QString name = QFileInfo(QString::fromStdString(run.script)).fileName();
  if (name.isEmpty()) name = QStringLiteral("matmulviz.record");
  out.eventCount = run.timeline.events.size();
  out.note = QStringLiteral("Each block is labelled with the line of the script that made it.");
  if (!run.complete)
    out.note += QStringLiteral(" The script raised: the timeline covers what ran.");
  out.note += pythonRunNote(run);
  out.timelines = std::make_shared<const std::vector<NamedTimeline>>(
      std::vector<NamedTimeline>{{name, std::move(run.timeline)}});
}

/// Removes the stores that processes which no longer run left in the temporary folder (a
/// store goes with its view, but not when the app is killed): their names hold the pid.
void removeStaleStores() {
  QDir temp = QDir::temp();
  for (const QString& name : temp.entryList({"matmulviz-timeline-*-*.sqlite"}, QDir::Files)) {
    bool ok = false;
    const pid_t pid = name.section('-', 2, 2).toInt(&ok);
    if (ok && pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH) temp.remove(name);
  }
}

/// The snapshot's devices in a new store in the temporary folder; progress from `start` to 1.
std::shared_ptr<const store::TimelineStore> snapshotStore(
    const snapshot::MemorySnapshot& s, const std::function<void(double)>& progress,
    const std::atomic<bool>* cancel, double start) {
  removeStaleStores();
  QTemporaryFile name(QDir::temp().filePath(QStringLiteral("matmulviz-timeline-%1-XXXXXX.sqlite")
                                                .arg(QCoreApplication::applicationPid())));
  if (!name.open()) throw std::runtime_error("cannot create a file in the temporary folder");
  const std::string path = name.fileName().toStdString();
  name.close();  // the writer replaces it; the store removes it when closed
  snapshot::LoadOptions options;
  if (progress)
    options.progress = [&](uint64_t done, uint64_t total) {
      progress(start + (1 - start) * (total ? double(done) / double(total) : 1.0));
    };
  options.cancel = cancel;
  snapshot::writeSnapshotStore(s, path, options);
  name.setAutoRemove(false);
  return std::make_shared<const store::TimelineStore>(path, true);
}

}  // namespace

// Parsing takes about 70% of a large snapshot's open, writing its store the rest.
constexpr double kParseShare = 0.7;

FileKind detectFileKind(const QByteArray& head) {
  if (!head.isEmpty() && static_cast<unsigned char>(head[0]) == 0x80) return FileKind::Snapshot;
  // gzip's magic number: a compressed snapshot ("snapshot.pickle.gz"), the only compressed file
  // the app reads; readMemorySnapshot inflates it and says so if it holds something else.
  if (head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
      static_cast<unsigned char>(head[1]) == 0x8b)
    return FileKind::Snapshot;
  const QByteArray text = head.trimmed();
  if (!text.startsWith('{')) return FileKind::Unknown;
  if (partitioner::looksLikeGraphFile(text.toStdString())) return FileKind::BudgetGraph;
  return text.contains("\"matmulviz-report\"") ? FileKind::Report : FileKind::Preset;
}

OpenedFile loadFile(const QString& path, const std::function<void(double)>& progress,
                    const std::atomic<bool>* cancel, size_t storeAboveEvents) {
  OpenedFile out;
  out.path = path;
  out.fileName = QFileInfo(path).fileName();
  QFile file(path);
  if (!QFileInfo(path).isFile() || !file.open(QIODevice::ReadOnly))
    throw problem(out.fileName, QStringLiteral("the file cannot be opened (%1)")
                                    .arg(QFileInfo::exists(path) ? QStringLiteral("not readable")
                                                                 : QStringLiteral("not found")));
  const bool script = QFileInfo(path).suffix().toLower() == QLatin1String("py");
  out.kind = script ? FileKind::Script : detectFileKind(file.peek(4096));
  if (file.size() == 0 && !script) throw problem(out.fileName, QStringLiteral("the file is empty"));
  switch (out.kind) {
    case FileKind::Report: {
      const std::string name = out.fileName.toStdString();
      const nlohmann::json doc = parseReportJson(file.readAll().toStdString(), name);
      std::vector<std::string> ignored;
      const std::string kind = reportKind(doc, name);
      if (kind == "multihead") {
        out.multihead = readMultiheadReport(doc, name);
      } else if (kind == "budget") {
        out.budget = readBudgetReport(doc, name);
      } else if (kind == "einsum") {
        out.einsum = readEinsumReport(doc, name);
      } else if (kind == "python") {
        // One reader: the report for the Program view, its timeline for the Memory view.
        PythonReport loaded = readPythonReport(doc, name);
        ignored = std::move(loaded.ignored);
        PythonRun run = pythonRunFromReport(loaded);
        pythonTimeline(run, out);
        out.pythonReport = std::make_shared<const PythonReport>(std::move(loaded));
      } else if (kind == "compare") {
        throw problem(out.fileName,
                      QStringLiteral("a comparison of two reports (matmulviz-cli compare --json) "
                                     "holds only their difference: open the two reports with "
                                     "File > Compare Reports (matmulviz --compare A B)"));
      } else {
        LoadedReport loaded = readReport(doc, name);
        ignored = std::move(loaded.ignored);
        out.report = std::make_shared<const StrategiesReport>(std::move(loaded.report));
      }
      for (const std::string& k : ignored) out.ignoredKeys << QString::fromStdString(k);
      break;
    }
    case FileKind::BudgetGraph: {
      const partitioner::GraphDocument doc =
          partitioner::parseGraphJson(file.readAll().toStdString(), out.fileName.toStdString());
      try {
        checkPlannable(doc.graph);
      } catch (const std::exception& e) {
        throw problem(out.fileName, QStringLiteral("the partitioner cannot plan this graph: ") +
                                        QString::fromStdString(e.what()));
      }
      out.budgetGraph = std::make_shared<const partitioner::JointGraph>(doc.graph);
      out.budgetTitle = QString::fromStdString(doc.source.title);
      if (out.budgetTitle.isEmpty()) out.budgetTitle = out.fileName;
      break;
    }
    case FileKind::Snapshot: {
      file.close();
      snapshot::LoadOptions options;
      if (progress)
        options.progress = [&](uint64_t done, uint64_t total) {
          progress(kParseShare * (total ? double(done) / double(total) : 1.0));
        };
      options.cancel = cancel;
      try {
        snapshot::MemorySnapshot s = snapshot::readMemorySnapshot(path.toStdString(), options);
        out.traceEntryCount = s.eventCount();
        if (out.traceEntryCount > storeAboveEvents) {
          out.store = snapshotStore(s, progress, cancel, kParseShare);
          for (const store::DeviceInfo& d : out.store->devices())
            out.eventCount += size_t(d.events);
        } else {
          out.timelines = snapshotTimelines(s);
          for (const NamedTimeline& t : *out.timelines) out.eventCount += t.timeline.events.size();
        }
        // One snapshot, shared by the allocator state and the allocations' hover texts.
        const auto shared = std::make_shared<const snapshot::MemorySnapshot>(std::move(s));
        allocatorHistories(shared, out);
        if (!out.store) out.allocations = makeSnapshotAllocations(shared);
        if (progress) progress(1.0);
        out.note = QStringLiteral("Blocks alive before the recording started are at time 0.");
      } catch (const store::StoreError& e) {
        throw problem(out.fileName, QStringLiteral("its timeline could not be stored: %1")
                                        .arg(QString::fromStdString(e.what())));
      } catch (const snapshot::SnapshotError& e) {
        // Its message names the file as it was given: say it again with the name alone.
        const QString what = QString::fromStdString(e.what());
        const QString prefix = "'" + path + "': ";
        throw problem(out.fileName, what.startsWith(prefix) ? what.mid(prefix.size()) : what);
      }
      break;
    }
    case FileKind::Preset:
    case FileKind::Script:
      break;
    case FileKind::Unknown:
      throw problem(out.fileName,
                    QStringLiteral("not a matmulviz report, a preset, a PyTorch memory snapshot "
                                   "or a Python script (it starts with neither '{' nor a pickle "
                                   "header, and its name does not end in .py)"));
  }
  return out;
}

}  // namespace matmulviz::ui
