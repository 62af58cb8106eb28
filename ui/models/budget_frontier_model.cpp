#include "ui/models/budget_frontier_model.h"

#include "core/util/format_units.h"

namespace matmulviz::ui {

QString budgetRangeText(const FrontierPoint& p) {
  if (p.budgetLo == p.budgetHi) return QString::number(p.budgetLo, 'f', 2);
  return QStringLiteral("%1 to %2").arg(p.budgetLo, 0, 'f', 2).arg(p.budgetHi, 0, 'f', 2);
}

int dominatingPlan(const QVector<FrontierPoint>& points, int index) {
  if (index < 0 || index >= points.size()) return -1;
  const FrontierPoint& p = points[index];
  for (int q = 0; q < points.size(); ++q) {
    const FrontierPoint& o = points[q];
    if (o.activationBytes <= p.activationBytes && o.recomputeFlops <= p.recomputeFlops &&
        (o.activationBytes < p.activationBytes || o.recomputeFlops < p.recomputeFlops))
      return q;
  }
  return -1;
}

BudgetFrontierModel::BudgetFrontierModel(QObject* parent) : QAbstractTableModel(parent) {}

void BudgetFrontierModel::setExplorer(const BudgetExplorer* explorer) {
  beginResetModel();
  disconnect(frontierConn_);
  disconnect(planConn_);
  explorer_ = explorer;
  if (explorer) {
    frontierConn_ = connect(explorer, &BudgetExplorer::frontierChanged, this, [this] {
      beginResetModel();
      endResetModel();
    });
    planConn_ = connect(explorer, &BudgetExplorer::planChanged, this, [this] {
      if (rowCount() > 0) emit dataChanged(index(0, Current), index(rowCount() - 1, Current));
    });
  }
  endResetModel();
}

int BudgetFrontierModel::dominatingRow(int row) const {
  return explorer_ ? dominatingPlan(explorer_->frontier(), row) : -1;
}

QString BudgetFrontierModel::toolTip(int row) const {
  if (row < 0 || row >= rowCount()) return {};
  const FrontierPoint& p = point(row);
  QString text = QStringLiteral(
                     "budget %1: %2 of activations saved (%3 values), %4 recomputed in the "
                     "backward (%5 ops)\n%6\n")
                     .arg(budgetRangeText(p), QString::fromStdString(formatSize(p.activationBytes)))
                     .arg(p.saved)
                     .arg(flopsText(p.recomputeFlops))
                     .arg(p.recomputed)
                     .arg(BudgetExplorer::routeText(p.route));
  const int by = dominatingRow(row);
  if (by >= 0) {
    const FrontierPoint& q = point(by);
    text += QStringLiteral(
                "Not on the frontier: budget %1 saves %2 and recomputes %3, no more of either.\n")
                .arg(budgetRangeText(q), QString::fromStdString(formatSize(q.activationBytes)),
                     flopsText(q.recomputeFlops));
  }
  return text + QStringLiteral("Click to choose this plan.");
}

int BudgetFrontierModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !explorer_ ? 0 : static_cast<int>(explorer_->frontier().size());
}

int BudgetFrontierModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant BudgetFrontierModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const FrontierPoint& p = point(index.row());
  const bool raw = role == RawRole || role == Qt::EditRole;
  if (role == Qt::ToolTipRole) return toolTip(index.row());
  if (role != Qt::DisplayRole && !raw) return {};
  const bool current = index.row() == currentRow();
  switch (index.column()) {
    case Budgets:
      return raw ? QVariant(p.budgetLo) : QVariant(budgetRangeText(p));
    case ActivationBytes:
      return raw ? QVariant(qint64(p.activationBytes))
                 : QVariant(QString::fromStdString(formatSize(p.activationBytes)));
    case ExtraFlops:
      return raw ? QVariant(qint64(p.recomputeFlops)) : QVariant(flopsText(p.recomputeFlops));
    case BackwardFlops:
      return raw ? QVariant(qint64(p.backwardFlops)) : QVariant(flopsText(p.backwardFlops));
    case Route:
      return raw ? QVariant(int(p.route)) : QVariant(BudgetExplorer::routeText(p.route));
    case Saved:
      return p.saved;
    case Recomputed:
      return p.recomputed;
    case Dominated: {
      const int by = dominatingRow(index.row());
      if (raw) return by >= 0;
      return by >= 0 ? QStringLiteral("by %1").arg(budgetRangeText(point(by))) : QString();
    }
    case Current:
      return raw ? QVariant(current) : QVariant(current ? QStringLiteral("current") : QString());
  }
  return {};
}

QVariant BudgetFrontierModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* const names[] = {
      "budgets", "activation memory", "extra backward FLOPs", "backward FLOPs",
      "why",     "saved values",      "recomputed ops",       "dominated",
      "current"};
  return section >= 0 && section < ColumnCount ? QString::fromLatin1(names[section]) : QVariant();
}

}  // namespace matmulviz::ui
