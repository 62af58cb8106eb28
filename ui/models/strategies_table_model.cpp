#include "ui/models/strategies_table_model.h"

#include "core/util/format_units.h"

#include <cmath>

namespace matmulviz::ui {

namespace {

QVariant finiteOrEmpty(double v) {
  return std::isfinite(v) ? QVariant(v) : QVariant();
}

/// A run that failed as a whole (bad input, out of host memory, cancelled) has no results: it
/// shows as one row, marked failed, with its message.
int rowsOf(const RunEntry& e) {
  return e.results.isEmpty() ? 1 : static_cast<int>(e.results.size());
}

QString keptText(const StrategyResult& r) {
  QStringList lines;
  for (const auto& k : r.keptAlive)
    lines
        << QStringLiteral("%1, %2 MiB, %3").arg(k.label).arg(k.bytes / kMiB, 0, 'f', 1).arg(k.why);
  return lines.join(QLatin1Char('\n'));
}

}  // namespace

QString csvField(const QString& text) {
  if (!text.contains(QLatin1Char(',')) && !text.contains(QLatin1Char('"')) &&
      !text.contains(QLatin1Char('\n')) && !text.contains(QLatin1Char('\r')))
    return text;
  QString quoted = text;
  quoted.replace(QLatin1String("\""), QLatin1String("\"\""));
  return QLatin1Char('"') + quoted + QLatin1Char('"');
}

StrategiesTableModel::StrategiesTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void StrategiesTableModel::setHistory(const RunHistory* history) {
  disconnect(appendedConn_);
  disconnect(resetConn_);
  disconnect(destroyedConn_);
  beginResetModel();
  history_ = history;
  rebuildRows();
  endResetModel();
  if (!history) return;
  destroyedConn_ = connect(history, &QObject::destroyed, this, [this] {
    beginResetModel();
    rows_.clear();
    endResetModel();
  });
  appendedConn_ =
      connect(history, &RunHistory::appended, this, [this](int index) { onAppended(index); });
  resetConn_ = connect(history, &RunHistory::reset, this, [this] {
    beginResetModel();
    rebuildRows();
    endResetModel();
  });
}

void StrategiesTableModel::rebuildRows() {
  rows_.clear();
  if (!history_) return;
  const auto& entries = history_->entries();
  for (int e = 0; e < entries.size(); ++e)
    for (int r = 0; r < rowsOf(entries[e]); ++r)
      rows_.append({e, entries[e].results.isEmpty() ? -1 : r});
}

void StrategiesTableModel::onAppended(int index) {
  if (!history_ || index < 0 || index >= history_->size()) return;
  const RunEntry& e = history_->entries()[index];
  const int count = rowsOf(e);
  const int first = static_cast<int>(rows_.size());
  beginInsertRows({}, first, first + count - 1);
  for (int r = 0; r < count; ++r) rows_.append({index, e.results.isEmpty() ? -1 : r});
  endInsertRows();
}

StrategiesTableModel::RowRef StrategiesTableModel::rowRef(int row) const {
  if (row < 0 || row >= rows_.size()) return {};
  return rows_[row];
}

int StrategiesTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int StrategiesTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant StrategiesTableModel::raw(const RowRef& ref, int column) const {
  const RunEntry& e = history_->entries()[ref.entry];
  switch (column) {  // the run's own columns, the same for a run that failed as a whole
    case Run:
      return e.id;
    case Title:
      return e.title;
    case RequiresGrad:
      return e.requiresGrad;
    default:
      break;
  }
  if (ref.result < 0) return failedRunRaw(e, column);
  const StrategyResult& r = e.results[ref.result];
  switch (column) {
    case Strategy:
      return r.strategy;
    case TimeMedianS:
      return r.ok ? finiteOrEmpty(r.timeMedianS) : QVariant();
    case CurMemMiB:
      return r.curMemBytes / kMiB;
    case MaxMemMiB:
      return r.maxMemBytes / kMiB;
    case PredictedS:
      return finiteOrEmpty(r.predictedS);
    case MaxRelErr:
      return finiteOrEmpty(r.maxRelErr);
    case Status:
      return r.ok ? QStringLiteral("ok") : r.error;
    default:
      return {};
  }
}

QVariant StrategiesTableModel::failedRunRaw(const RunEntry& e, int column) const {
  switch (column) {
    case Strategy:
      return QStringLiteral("(run failed)");
    case Status:
      return e.error.isEmpty() ? QStringLiteral("failed") : e.error;
    default:
      return {};
  }
}

QVariant StrategiesTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || !history_ || index.row() >= rows_.size() || index.column() >= ColumnCount)
    return {};
  const RowRef ref = rows_[index.row()];
  if (ref.entry >= history_->size()) return {};
  const int col = index.column();
  if (role == RawRole || role == Qt::EditRole) return raw(ref, col);
  if (role == Qt::TextAlignmentRole) {
    const bool number = col == Run || (col >= TimeMedianS && col <= MaxRelErr);
    return QVariant::fromValue(Qt::Alignment(number ? Qt::AlignRight | Qt::AlignVCenter
                                                    : Qt::AlignLeft | Qt::AlignVCenter));
  }
  if (role == Qt::ToolTipRole) {
    if (ref.result < 0) return history_->entries()[ref.entry].error;
    const StrategyResult& r = history_->entries()[ref.entry].results[ref.result];
    if (!r.ok) return r.error;
    const QString kept = keptText(r);
    return kept.isEmpty() ? QVariant() : QVariant(kept);
  }
  if (role != Qt::DisplayRole) return {};
  const QVariant v = raw(ref, col);
  if (!v.isValid()) return QString();
  if (ref.result < 0) return v.toString();  // a run that failed as a whole: its text columns
  const StrategyResult& r = history_->entries()[ref.entry].results[ref.result];
  switch (col) {
    case TimeMedianS:
    case PredictedS:
      return QString::fromStdString(formatSeconds(v.toDouble()));
    case CurMemMiB:  // a statement that did not finish has no curMem/maxMem to show
      return r.ok ? QString::fromStdString(formatSize(r.curMemBytes)) : QStringLiteral("-");
    case MaxMemMiB:
      return r.ok ? QString::fromStdString(formatSize(r.maxMemBytes)) : QStringLiteral("-");
    case MaxRelErr:
      return QString::number(v.toDouble(), 'e', 1);
    default:
      return v.toString();
  }
}

QVariant StrategiesTableModel::headerData(int section, Qt::Orientation orientation,
                                          int role) const {
  if (orientation != Qt::Horizontal)
    return QAbstractTableModel::headerData(section, orientation, role);
  if (role != Qt::DisplayRole || section < 0 || section >= ColumnCount) return {};
  static const char* const names[] = {"run",         "title",  "strategy", "requires_grad",
                                      "time median", "curMem", "maxMem",   "predicted",
                                      "max_rel_err", "status"};
  return QString::fromLatin1(names[section]);
}

QString StrategiesTableModel::toCsv() const {
  static const char* const keys[] = {"run",           "title",       "strategy",    "requires_grad",
                                     "time_median_s", "cur_mem_mib", "max_mem_mib", "predicted_s",
                                     "max_rel_err",   "status"};
  QStringList header;
  for (const char* k : keys) header << QString::fromLatin1(k);
  QString out = header.join(QLatin1Char(',')) + QLatin1Char('\n');
  for (const RowRef& ref : rows_) {
    QStringList fields;
    for (int c = 0; c < ColumnCount; ++c) {
      const QVariant v = raw(ref, c);
      if (!v.isValid()) {
        fields << QString();
      } else if (v.typeId() == QMetaType::Double) {
        fields << QString::number(v.toDouble(), 'g', 17);
      } else {
        fields << csvField(v.toString());
      }
    }
    out += fields.join(QLatin1Char(',')) + QLatin1Char('\n');
  }
  return out;
}

}  // namespace matmulviz::ui
