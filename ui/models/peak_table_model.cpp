#include "ui/models/peak_table_model.h"

#include "core/util/format_units.h"

namespace matmulviz::ui {

PeakTableModel::PeakTableModel(QObject* parent) : QAbstractItemModel(parent) {}

void PeakTableModel::setRun(std::shared_ptr<const ProgramRun> run) {
  beginResetModel();
  run_ = std::move(run);
  endResetModel();
}

QModelIndex PeakTableModel::indexOfLine(int line) const {
  if (!run_ || line <= 0) return {};
  const auto& groups = run_->peakGroups();
  for (int i = 0; i < groups.size(); ++i)
    if (groups[i].scriptLine == line) return index(i, 0);
  return {};
}

QModelIndex PeakTableModel::index(int row, int column, const QModelIndex& parent) const {
  if (!hasIndex(row, column, parent)) return {};
  return createIndex(row, column, parent.isValid() ? quintptr(parent.row() + 1) : quintptr(0));
}

QModelIndex PeakTableModel::parent(const QModelIndex& child) const {
  if (!child.isValid() || child.internalId() == 0) return {};
  return createIndex(int(child.internalId() - 1), 0, quintptr(0));
}

int PeakTableModel::rowCount(const QModelIndex& parent) const {
  if (!run_) return 0;
  if (!parent.isValid()) return int(run_->peakGroups().size());
  if (parent.internalId() != 0 || parent.column() != 0) return 0;  // owners have no children
  return int(run_->peakGroups()[parent.row()].owners.size());
}

int PeakTableModel::columnCount(const QModelIndex&) const {
  return ColumnCount;
}

QString PeakTableModel::share(qint64 bytes) const {
  const qint64 peak = run_->peakBytes();
  return peak > 0 ? QStringLiteral("%1%").arg(100.0 * double(bytes) / double(peak), 0, 'f', 1)
                  : QString();
}

QVariant PeakTableModel::lineData(const ProgramRun::PeakGroup& g, int column, int role) const {
  if (role == ScriptLineRole) return g.scriptLine;
  if (role == RawRole) {
    if (column == Bytes) return g.bytes;
    if (column == Blocks) return g.blocks;
  }
  if (role == Qt::ToolTipRole && column == Code) return g.code;
  if (role != Qt::DisplayRole && role != RawRole) return {};
  switch (column) {
    case Where:
      return g.where;
    case Bytes:
      return QString::fromStdString(formatSize(g.bytes));
    case Blocks:
      return g.blocks;
    case Share:
      return share(g.bytes);
    case Code:
      return g.code;
  }
  return {};
}

QVariant PeakTableModel::ownerData(const ProgramRun::OwnerGroup& o, int column, int role) const {
  if (role == RawRole) {
    if (column == Bytes) return o.bytes;
    if (column == Blocks) return o.blocks;
  }
  if (role == Qt::ToolTipRole && column == Where) return o.owner;
  if (role != Qt::DisplayRole && role != RawRole) return {};
  switch (column) {
    case Where:
      return o.owner;
    case Bytes:
      return QString::fromStdString(formatSize(o.bytes));
    case Blocks:
      return o.blocks;
    case Share:
      return share(o.bytes);
  }
  return {};
}

QVariant PeakTableModel::data(const QModelIndex& index, int role) const {
  if (!run_ || !checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  if (role == Qt::TextAlignmentRole)
    return index.column() == Bytes || index.column() == Blocks || index.column() == Share
               ? QVariant(int(Qt::AlignRight | Qt::AlignVCenter))
               : QVariant();
  const auto& groups = run_->peakGroups();
  if (index.internalId() == 0) return lineData(groups[index.row()], index.column(), role);
  const ProgramRun::PeakGroup& g = groups[int(index.internalId() - 1)];
  if (role == ScriptLineRole) return g.scriptLine;
  return ownerData(g.owners[index.row()], index.column(), role);
}

QVariant PeakTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case Where:
      return tr("Line, then what keeps it alive");
    case Bytes:
      return tr("At the peak");
    case Blocks:
      return tr("Blocks");
    case Share:
      return tr("Share");
    case Code:
      return tr("Code");
  }
  return {};
}

}  // namespace matmulviz::ui
