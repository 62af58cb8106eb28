#include "ui/models/kernel_stats_model.h"

#include "core/util/format_units.h"
#include "ui/models/qstring_of.h"

#include <QStringList>
#include <cmath>

namespace matmulviz::ui {
namespace {

QString count(std::uint64_t n) {
  return QStringLiteral("%L1").arg(n);
}

QString dim3(const sim::Dim3& d) {
  return QStringLiteral("(%1, %2, %3)").arg(d.x).arg(d.y).arg(d.z);
}

QString coords(const std::vector<std::int64_t>& index) {
  QStringList parts;
  for (std::int64_t i : index) parts << QString::number(i);
  return QStringLiteral("[%1]").arg(parts.join(QStringLiteral(", ")));
}

}  // namespace

KernelStatsModel::KernelStatsModel(QObject* parent) : QAbstractTableModel(parent) {}

void KernelStatsModel::setResult(std::shared_ptr<const KernelLaunchResult> result) {
  beginResetModel();
  rows_.clear();
  if (result) {
    addLaunchRows(*result);
    addWorkRows(*result);
    addRunRows(*result);
  }
  endResetModel();
}

void KernelStatsModel::add(const char* name, const QString& value, const QString& tip,
                           QVariant raw) {
  rows_.push_back({QLatin1String(name), value, tip, std::move(raw)});
}

void KernelStatsModel::addLaunchRows(const KernelLaunchResult& result) {
  const sim::LaunchReport& r = result.run.report;
  const sim::LaunchStats& s = r.stats;
  const KernelGeometry& g = result.geometry;
  const double outputs = double(g.M) * double(g.N);
  const double share = s.threads ? outputs / double(s.threads) : 0;
  add("kernel", result.spec.kernel, result.file + QStringLiteral(": ") + result.summary,
      result.spec.kernel);
  add("sizes", QStringLiteral("M %1, K %2, N %3, TPB %4").arg(g.M).arg(g.K).arg(g.N).arg(g.tpb),
      QStringLiteral("C[M, N] = A[M, K] @ B[K, N] in TPB x TPB blocks"), qlonglong(g.M));
  add("grid", dim3(r.config.gridDim), QStringLiteral("gridDim: blocks along x, y, z"),
      qulonglong(s.blocks));
  add("block", dim3(r.config.blockDim), QStringLiteral("blockDim: threads per block"),
      qulonglong(r.config.threadsPerBlock()));
  add("threads", count(s.threads), QStringLiteral("every thread the launch starts"),
      qulonglong(s.threads));
  const auto inside = static_cast<std::uint64_t>(g.M * g.N);
  add("threads inside C", count(inside),
      QStringLiteral("threads whose (i, j) passes the bounds check: one per element of C"),
      qulonglong(inside));
  add("idle threads", count(s.threads - inside),
      QStringLiteral("threads whose (i, j) falls outside C: they compute no element of C "
                     "(hatched on the diagram); in smem_tiled they still stage tiles"),
      qulonglong(s.threads - inside));
  add("share inside C", QStringLiteral("%1 %").arg(100 * share, 0, 'f', 1),
      QStringLiteral("threads inside C / threads: the share of the launch doing useful work"),
      share);
  add("threads touching memory", count(s.activeThreads),
      QStringLiteral("threads that read or wrote global memory (the CLI's active_threads); in "
                     "smem_tiled the idle threads count too, since they stage tiles"),
      qulonglong(s.activeThreads));
}

void KernelStatsModel::addWorkRows(const KernelLaunchResult& result) {
  const sim::LaunchStats& s = result.run.report.stats;
  const KernelGeometry& g = result.geometry;
  const double outputs = double(g.M) * double(g.N);
  const double bytes = double(s.globalLoadBytes + s.globalStoreBytes);
  const double intensity = bytes > 0 ? 2.0 * double(s.fmas) / bytes : 0;
  add("global loads", count(s.globalLoads), QStringLiteral("elements read from A and B"),
      qulonglong(s.globalLoads));
  add("loads per output", QString::number(double(s.globalLoads) / outputs, 'f', 1),
      QStringLiteral("global loads / (M x N): 2K for naive, about 2K/TPB for smem_tiled"),
      double(s.globalLoads) / outputs);
  if (g.tiled) {
    add("shared loads", count(s.sharedLoads), QStringLiteral("reads of As and Bs"),
        qulonglong(s.sharedLoads));
  }
  add("bytes read", bytesText(static_cast<std::int64_t>(s.globalLoadBytes)),
      QStringLiteral("global memory read, every load counted (no cache)"),
      qulonglong(s.globalLoadBytes));
  add("bytes written", bytesText(static_cast<std::int64_t>(s.globalStoreBytes)),
      QStringLiteral("global memory written"), qulonglong(s.globalStoreBytes));
  add("FLOPs", count(2 * s.fmas), QStringLiteral("2 per multiply-add"), qulonglong(2 * s.fmas));
  add("arithmetic intensity", QStringLiteral("%1 FLOP/B").arg(intensity, 0, 'g', 3),
      QStringLiteral("FLOPs / global bytes moved"), intensity);
  add("barriers", count(s.barriers), QStringLiteral("barrier phases completed, all blocks"),
      qulonglong(s.barriers));
}

void KernelStatsModel::addRunRows(const KernelLaunchResult& result) {
  const sim::LaunchReport& r = result.run.report;
  const sim::LaunchStats& s = r.stats;
  const KernelGeometry& g = result.geometry;
  const double rate = s.threadsPerS();
  add("simulation",
      QString::fromStdString(formatSeconds(s.elapsedS) + ", " + formatRate(rate, "threads")),
      QStringLiteral("wall time of the simulated launch on this CPU"), s.elapsedS);
  add("max_rel_err", QString::number(result.run.maxRelErr, 'g', 3),
      QStringLiteral("max|C - ref| / max|ref| against float64 BLAS"), result.run.maxRelErr);
  const sim::DiagnosticCounts& d = r.diagnosticCounts;
  add("diagnostics",
      d.total() == 0 ? QStringLiteral("none")
                     : QStringLiteral("%1 out of bounds, %2 divergent barriers, %3 races")
                           .arg(d.outOfBounds)
                           .arg(d.barrierDivergence)
                           .arg(d.sharedRaces),
      QStringLiteral("what the simulator caught instead of crashing (exact counts)"),
      qulonglong(d.total()));
  add("trace",
      QStringLiteral("block (%1,%2): %L3 events%4")
          .arg(g.blockX(result.tracedBlock))
          .arg(g.blockY(result.tracedBlock))
          .arg(qulonglong(r.trace.events().size()))
          .arg(r.trace.dropped()
                   ? QStringLiteral(", %L1 past the cap").arg(qulonglong(r.trace.dropped()))
                   : QString()),
      QStringLiteral("only the animated block is traced"), qulonglong(r.trace.events().size()));
}

int KernelStatsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int KernelStatsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant KernelStatsModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  const Row& row = rows_[std::size_t(index.row())];
  switch (role) {
    case Qt::DisplayRole:
      return index.column() == Name ? row.name : row.value;
    case Qt::ToolTipRole:
      return row.tip;
    case Qt::UserRole:
      return index.column() == Name ? QVariant(row.name) : row.raw;
    default:
      return {};
  }
}

QVariant KernelStatsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  if (section == Name) return QStringLiteral("Statistic");
  if (section == Value) return QStringLiteral("Value");
  return {};
}

int KernelStatsModel::rowOf(const QString& name) const {
  for (std::size_t i = 0; i < rows_.size(); ++i) {
    if (rows_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

KernelDiagnosticsModel::KernelDiagnosticsModel(QObject* parent) : QAbstractTableModel(parent) {}

void KernelDiagnosticsModel::setResult(std::shared_ptr<const KernelLaunchResult> result) {
  beginResetModel();
  result_ = std::move(result);
  endResetModel();
}

int KernelDiagnosticsModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() || !result_) return 0;
  return static_cast<int>(result_->run.report.diagnostics.size());
}

int KernelDiagnosticsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant KernelDiagnosticsModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  const sim::Diagnostic& d = result_->run.report.diagnostics[std::size_t(index.row())];
  if (role == Qt::ToolTipRole) return QString::fromStdString(d.message);
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case Kind:
      return QLatin1String(sim::toString(d.kind));
    case Block:
      return dim3(d.block);
    case Thread:
      return dim3(d.thread);
    case Array:
      return QString::fromStdString(d.array);
    case Index:
      return coords(d.index);
    case Message:
      return QString::fromStdString(d.message);
    default:
      return {};
  }
}

QVariant KernelDiagnosticsModel::headerData(int section, Qt::Orientation orientation,
                                            int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* names[] = {"Kind", "Block", "Thread", "Array", "Index", "Message"};
  return section >= 0 && section < ColumnCount ? QVariant(QLatin1String(names[section]))
                                               : QVariant();
}

}  // namespace matmulviz::ui
