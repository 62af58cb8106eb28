#pragma once
// `matmulviz-cli export --report FILE` for the files the desktop app opens other than a
// strategies report: a Python run's report (`python3 -m matmulviz SCRIPT --report FILE`), a
// PyTorch memory snapshot (torch.cuda.memory._dump_snapshot, any size: one of millions of events
// is drawn from its timeline store at level of detail, as the Memory view draws it) and a joint
// graph file (`matmulviz-cli budget --graph-out`), and the multi-head, einsum and budget
// reports (summaries; a budget report's script traced again). The file is read by the app's own
// loader (ui/models/open_file.h), so what the app opens, export draws, with the same chart code.
#include <QString>
#include <QStringList>

#include <functional>
#include <string>

namespace matmulviz::ui {
struct OpenedFile;
}

namespace matmulviz::cli {

struct OpenedExport {
  QString path;         ///< the file read
  QString out;          ///< the folder to write into (already created)
  QStringList formats;  ///< png, svg, pdf, csv, json (json: nothing for these kinds)
  double budget = 0.3;  ///< a joint graph's activation memory budget, in [0, 1]
};

/// The end of an export: each file of `written` on stdout, then `error` (when set) on stderr as
/// "matmulviz-cli export: <error>" with 1 returned, else "[matmulviz] wrote N files to <dir>" on
/// stderr and 0.
int finishExport(const QStringList& written, const QString& error, const std::string& dir);

/// A progress callback for ui::loadFile: "[matmulviz] reading 40%" on stderr at each tenth.
std::function<void(double)> snapshotProgress();

/// Writes the charts of `file` (read from e.path by ui::loadFile) into `e.out`, printing each path
/// on stdout:
///   memory-allocations-<device>.<png|svg|pdf|csv> for each device of a snapshot held in memory
///   (its allocations stacked as PyTorch's memory_viz draws them),
///   memory-timeline-<name>.<png|svg|pdf|csv> for each timeline (a Python run's script, a
///   snapshot's device, "cuda-0"; characters other than letters, digits, '.', '_' and '-' become
///   '-'), summary.txt (per timeline: events, peak allocated with its event and label, peak
///   reserved), or the Budget charts of a joint graph (budget-graph, budget-frontier,
///   budget-timeline); summary.txt of a multi-head or einsum report (what ran, what it
///   measured); the Budget charts of a budget report at e.budget, its script traced again (as
///   written, or beside the report: exit 2 when it is in neither place). Exit status: 0; 2 for a
///   Python script or a preset, which are not reports (a message naming the file on stderr), or a
///   strategies report (not drawn here); 1 when writing fails.
int exportOpenedFile(const OpenedExport& e, const ui::OpenedFile& file);

}  // namespace matmulviz::cli
