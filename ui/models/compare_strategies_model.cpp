#include "ui/models/compare_strategies_model.h"

#include "core/report/compare_text.h"
#include "core/util/format_units.h"
#include "ui/models/qstring_of.h"

#include <cmath>

namespace matmulviz::ui {

CompareStrategiesModel::CompareStrategiesModel(QObject* parent) : QAbstractTableModel(parent) {}

void CompareStrategiesModel::setComparison(const StrategiesComparison& c) {
  beginResetModel();
  comparison_ = c;
  endResetModel();
}

void CompareStrategiesModel::clear() {
  beginResetModel();
  comparison_ = {};
  endResetModel();
}

int CompareStrategiesModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(comparison_.strategies.size());
}

int CompareStrategiesModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant CompareStrategiesModel::raw(const StrategyDiff& d, int column) const {
  switch (column) {
    case Strategy:
      return qs(d.strategy);
    case MaxMemA:
      return qint64(d.maxMemA);
    case MaxMemB:
      return qint64(d.maxMemB);
    case MaxMemDifference:
      return qint64(d.maxMemDifference());
    case CurMemA:
      return qint64(d.curMemA);
    case CurMemB:
      return qint64(d.curMemB);
    case CurMemDifference:
      return qint64(d.curMemDifference());
    case TimeA:
      return d.timeA;
    case TimeB:
      return d.timeB;
    case TimeDifference:
      return d.timeDifference();
  }
  return {};
}

QString CompareStrategiesModel::text(const StrategyDiff& d, int column) const {
  const bool both = d.okA && d.okB;
  auto side = [&](bool in, bool ok, int64_t bytes) {
    return !in ? tr("absent") : !ok ? tr("failed") : qs(formatSize(bytes));
  };
  switch (column) {
    case Strategy:
      return qs(d.strategy);
    case MaxMemA:
      return side(d.inA, d.okA, d.maxMemA);
    case MaxMemB:
      return side(d.inB, d.okB, d.maxMemB);
    case MaxMemDifference:
      return both ? qs(formatSizeDifference(d.maxMemDifference())) : QStringLiteral("-");
    case CurMemA:
      return side(d.inA, d.okA, d.curMemA);
    case CurMemB:
      return side(d.inB, d.okB, d.curMemB);
    case CurMemDifference:
      return both ? qs(formatSizeDifference(d.curMemDifference())) : QStringLiteral("-");
    case TimeA:
      return qs(formatSeconds(d.timeA));
    case TimeB:
      return qs(formatSeconds(d.timeB));
    case TimeDifference:
      return qs(formatSecondsDifference(d.timeDifference()));
  }
  return {};
}

QVariant CompareStrategiesModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount) return {};
  const StrategyDiff& d = comparison_.strategies[size_t(index.row())];
  const int c = index.column();
  switch (role) {
    case Qt::DisplayRole:
      return text(d, c);
    case RawRole:
      return raw(d, c);
    case SignRole: {
      const bool diff = c == MaxMemDifference || c == CurMemDifference || c == TimeDifference;
      const double v = raw(d, c).toDouble();
      if (!diff || !(d.okA && d.okB) || !std::isfinite(v)) return 0;
      return v > 0 ? 1 : v < 0 ? -1 : 0;
    }
    case Qt::ToolTipRole: {
      QStringList errors;
      if (d.inA && !d.okA) errors << tr("A: %1").arg(qs(d.errorA));
      if (d.inB && !d.okB) errors << tr("B: %1").arg(qs(d.errorB));
      return errors.isEmpty() ? QVariant() : QVariant(errors.join('\n'));
    }
    case Qt::TextAlignmentRole:
      return c == Strategy ? QVariant() : QVariant(Qt::AlignRight | Qt::AlignVCenter);
  }
  return {};
}

QVariant CompareStrategiesModel::headerData(int section, Qt::Orientation orientation,
                                            int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* const names[] = {"strategy", "maxMem A",  "maxMem B",     "maxMem B − A",
                                      "curMem A", "curMem B",  "curMem B − A", "time A",
                                      "time B",   "time B − A"};
  return section >= 0 && section < ColumnCount ? tr(names[section]) : QVariant();
}

}  // namespace matmulviz::ui
