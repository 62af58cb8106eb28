#pragma once
// What File > Open, drag and drop and `matmulviz FILE...` read: a matmulviz report (of a
// strategies run or a Python run), a PyTorch memory snapshot, a preset, or a Python script (by
// its .py suffix; the others are told apart by their first bytes), and loaded by one function that
// runs on a worker thread (no Qt GUI types; the snapshot's progress and cancel pass through).
// A file that cannot be opened gives a message naming the file (its name, never its folder) and
// the problem; nothing is half-loaded.

#include "core/io/allocator_history.h"
#include "core/partitioner/joint_graph.h"
#include "core/report/other_reports.h"
#include "core/report/python_report.h"
#include "core/report/strategies_report.h"

#include <QString>
#include <QStringList>
#include <QVector>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace matmulviz::store {
class TimelineStore;
}

namespace matmulviz::ui {

struct SnapshotAllocations;

enum class FileKind {
  Report,       ///< a JSON document with the matmulviz report envelope
  BudgetGraph,  ///< a report of kind "budget-graph": a traced joint graph for the Budget view
  Snapshot,     ///< a pickle (torch.cuda.memory._dump_snapshot)
  Preset,       ///< any other JSON object: a scenario preset
  Script,       ///< a Python script (a .py file), for the Program view
  Unknown,      ///< none of these (empty, or neither JSON nor a pickle)
};

/// snapshot::kStoreAboveEvents (core/io/snapshot_store.h).
inline constexpr size_t kStoreAboveEvents = 1'000'000;

/// The kind of a file whose first bytes are `head` (a few KiB are enough): a pickle starts with
/// the PROTO opcode 0x80, a gzip-compressed snapshot gzip's magic 0x1f 0x8b; a report is a JSON
/// object naming "matmulviz-report"; any other text starting with '{' is taken as a preset. A
/// report naming the kind "budget-graph" is a BudgetGraph.
FileKind detectFileKind(const QByteArray& head);

/// Snapshots of up to this many trace events keep their trace in memory for the allocator state
/// at any event (core/io/allocator_history.h: about 37 bytes an event plus checkpoints); above
/// it the segments panel shows why it is off.
inline constexpr size_t kAllocatorStateMaxEvents = 20'000'000;

/// A memory timeline with the name the Memory view offers it under.
struct NamedTimeline {
  QString name;  ///< a snapshot's device ("cuda:0"), a Python run's script ("train.py")
  MemoryTimeline timeline;
};

/// A file read by loadFile: `report` is set for a strategies report, `timelines` for a Python
/// run's report (one; `pythonReport` too, for the Program view) and a snapshot (one per device),
/// neither for a preset or a script (the scenario panel reads presets itself, and the Program
/// view scripts, on the GUI thread: they are small).
struct OpenedFile {
  QString path;
  QString fileName;  ///< the name without its folder, for titles and messages
  FileKind kind = FileKind::Unknown;
  std::shared_ptr<const StrategiesReport> report;
  /// A report of kind "python" (python3 -m matmulviz SCRIPT --report FILE), for the Program view.
  std::shared_ptr<const PythonReport> pythonReport;
  QStringList ignoredKeys;  ///< keys of the report this build does not know (skipped)
  std::shared_ptr<const std::vector<NamedTimeline>> timelines;
  /// Instead of `timelines`, for a snapshot of more than storeAboveEvents events: its devices
  /// in a temporary SQLite store (deleted when the last holder lets go), drawn at level of
  /// detail.
  std::shared_ptr<const store::TimelineStore> store;
  /// With `timelines` of a snapshot (not with a store): the snapshot, its bands stacked by
  /// allocation and its blocks' facts, for the Memory view's "stack by allocation" and hovers.
  std::shared_ptr<const SnapshotAllocations> allocations;
  /// Events over all timelines: allocations, frees and segment changes, as the Memory view
  /// numbers them (a snapshot's 'free_requested' and 'snapshot' trace entries are not events).
  size_t eventCount = 0;
  size_t traceEntryCount = 0;  ///< a snapshot's trace entries over all devices (PyTorch's)
  /// Reports that hold no timeline (core/report/other_reports.h): a multi-head run's workload
  /// (rerun here), a budget sweep's script (traced again), an einsum run (summarised).
  std::optional<MultiheadReportFile> multihead;
  std::optional<BudgetReportFile> budget;
  std::optional<EinsumReportFile> einsum;
  /// A snapshot's allocator state at any event, one per device of `timelines` or `store` (the
  /// snapshot, trace included, shared by them); empty for other files and for a snapshot of
  /// more than kAllocatorStateMaxEvents events, when `allocatorNote` says so.
  QVector<std::shared_ptr<const snapshot::AllocatorHistory>> allocatorHistories;
  QString allocatorNote;
  /// A graph file's joint graph (checked plannable) and its title.
  std::shared_ptr<const partitioner::JointGraph> budgetGraph;
  QString budgetTitle;
  /// What the Memory view says about the timelines ("blocks alive before the recording started
  /// are at time 0", "the script raised: ...").
  QString note;
};

/// Reads the file at `path`. `progress(fraction in [0, 1])` is called on the calling thread
/// while a snapshot is parsed and stored; `cancel`, when it becomes true, stops a snapshot's
/// parse. A snapshot of more than `storeAboveEvents` trace events goes into a store in the
/// system's temporary folder (OpenedFile::store) rather than into timelines in memory.
/// Throws std::runtime_error whose what() is "'<name>': <problem>" for a file that cannot be
/// read, an unknown kind, and everything the report and snapshot loaders refuse; throws
/// pickle::Cancelled when cancelled.
OpenedFile loadFile(const QString& path, const std::function<void(double)>& progress = {},
                    const std::atomic<bool>* cancel = nullptr,
                    size_t storeAboveEvents = kStoreAboveEvents);

}  // namespace matmulviz::ui
