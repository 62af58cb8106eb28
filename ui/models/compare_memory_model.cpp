#include "ui/models/compare_memory_model.h"

#include "core/report/compare_text.h"
#include "core/util/format_units.h"
#include "ui/models/strategies_table_model.h"  // csvField

namespace matmulviz::ui {

CompareMemoryModel::CompareMemoryModel(QObject* parent) : QAbstractTableModel(parent) {}

void CompareMemoryModel::setComparison(const TimelineComparison& c) {
  beginResetModel();
  comparison_ = c;
  has_ = true;
  rebuildRows();
  endResetModel();
}

void CompareMemoryModel::clear() {
  beginResetModel();
  comparison_ = {};
  has_ = false;
  rows_.clear();
  endResetModel();
}

void CompareMemoryModel::setGrouping(Grouping g) {
  if (g == grouping_) return;
  beginResetModel();
  grouping_ = g;
  rebuildRows();
  endResetModel();
}

void CompareMemoryModel::rebuildRows() {
  rows_.clear();
  if (!has_) return;
  const TimelineComparison& c = comparison_;
  rows_.append({tr("peak allocated"), tr("peak"), {}, c.allocatedA.bytes, c.allocatedB.bytes});
  rows_.append({tr("peak reserved"), tr("peak"), {}, c.reservedA.bytes, c.reservedB.bytes});
  auto addBytes = [this](const std::vector<BytesDiff>& list, const QString& what) {
    for (const BytesDiff& d : list)
      rows_.append({QString::fromStdString(d.name), what, {}, d.a, d.b});
  };
  switch (grouping_) {
    case Grouping::PeakByLabel:
      addBytes(c.peakByLabel, tr("label at the peak"));
      break;
    case Grouping::PeakByCategory:
      addBytes(c.peakByCategory, tr("category at the peak"));
      break;
    case Grouping::AllocationsByLabel:
      for (const AllocationsDiff& d : c.allocationsByLabel)
        rows_.append({QString::fromStdString(d.label), tr("allocated over the run"),
                      QStringLiteral("%1 -> %2").arg(d.countA).arg(d.countB), d.bytesA, d.bytesB});
      break;
  }
}

int CompareMemoryModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int CompareMemoryModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant CompareMemoryModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rows_.size() || index.column() >= ColumnCount) return {};
  const Row& r = rows_[index.row()];
  const qint64 d = r.b - r.a;
  const bool bytesColumn = index.column() >= ABytes && index.column() <= Difference;
  switch (role) {
    case SignRole:
      return d > 0 ? 1 : d < 0 ? -1 : 0;
    case Qt::TextAlignmentRole:
      return bytesColumn ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant();
    case RawRole:
    case Qt::DisplayRole:
      break;
    default:
      return {};
  }
  const bool raw = role == RawRole;
  switch (index.column()) {
    case Name:
      return r.name;
    case What:
      return r.what;
    case ABytes:
      return raw ? QVariant(r.a) : QVariant(QString::fromStdString(formatSize(r.a)));
    case BBytes:
      return raw ? QVariant(r.b) : QVariant(QString::fromStdString(formatSize(r.b)));
    case Difference:
      return raw ? QVariant(d) : QVariant(QString::fromStdString(formatSizeDifference(d)));
    case Blocks:
      return r.blocks;
  }
  return {};
}

QVariant CompareMemoryModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case Name:
      return tr("label / category");
    case What:
      return tr("what");
    case ABytes:
      return tr("A");
    case BBytes:
      return tr("B");
    case Difference:
      return tr("B − A");
    case Blocks:
      return tr("blocks A -> B");
  }
  return {};
}

QString CompareMemoryModel::toCsv() const {
  QString out = QStringLiteral("name,what,a_bytes,b_bytes,difference_bytes,blocks\n");
  for (const Row& r : rows_)
    out += QStringLiteral("%1,%2,%3,%4,%5,%6\n")
               .arg(csvField(r.name), csvField(r.what))
               .arg(r.a)
               .arg(r.b)
               .arg(r.b - r.a)
               .arg(csvField(r.blocks));
  return out;
}

}  // namespace matmulviz::ui
