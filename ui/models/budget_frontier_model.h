#pragma once
// The Pareto frontier of a BudgetExplorer's sweep as a table, one row per distinct plan in budget
// order: the budgets that give it, activation memory, extra backward FLOPs (recomputation), all
// backward FLOPs, the route, how many values are saved and ops recomputed, whether another plan
// dominates it, and whether it is the current plan. Resets on a new sweep; on a new plan only the
// Current column changes.
//
// "Distinct plan" is not "on the frontier": the knapsack only unbans and the final cut can miss
// the budget, so a larger budget can give a plan that keeps more memory and recomputes no less
// than a plan of a smaller budget (or the other way round). Such a plan is dominated: another
// plan is no worse in both activation memory and extra backward FLOPs and better in one.

#include "ui/models/budget_explorer.h"

#include <QAbstractTableModel>
#include <QPointer>

namespace matmulviz::ui {

class BudgetFrontierModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    Budgets,          ///< "0.30 to 0.45"; RawRole: the smallest (double)
    ActivationBytes,  ///< "5 MiB"; RawRole: bytes (qint64)
    ExtraFlops,       ///< recompute FLOPs
    BackwardFlops,    ///< every FLOP of the backward
    Route,            ///< BudgetExplorer::routeText
    Saved,            ///< values saved
    Recomputed,       ///< ops recomputed
    Dominated,        ///< "" or "by 0.30 to 0.45" (a plan that dominates it); RawRole: bool
    Current,          ///< "current" or ""; RawRole: bool
    ColumnCount
  };
  static constexpr int RawRole = Qt::UserRole + 1;

  explicit BudgetFrontierModel(QObject* parent = nullptr);
  void setExplorer(const BudgetExplorer* explorer);

  const FrontierPoint& point(int row) const { return explorer_->frontier()[row]; }
  int currentRow() const { return explorer_ ? explorer_->currentFrontierIndex() : -1; }
  /// The row of a plan that dominates row `row` (see dominatingPlan); -1 when `row` is on the
  /// Pareto frontier or out of range.
  int dominatingRow(int row) const;
  bool isDominated(int row) const { return dominatingRow(row) >= 0; }
  /// "budget 0.30 to 0.45: 3 MiB of activations saved (4 values), 805 MFLOP recomputed ...",
  /// with a line naming the dominating plan when there is one.
  QString toolTip(int row) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  QPointer<const BudgetExplorer> explorer_;
  QMetaObject::Connection frontierConn_, planConn_;
};

/// "0.30" or "0.30 to 0.45".
QString budgetRangeText(const FrontierPoint& p);

/// Pareto dominance over (activation bytes, extra backward FLOPs), both to be minimised: the
/// index of the first point q of `points` with q.activationBytes <= p.activationBytes and
/// q.recomputeFlops <= p.recomputeFlops, one of them strictly, where p = points[index]; -1 when
/// none (p is on the frontier; two plans with equal numbers do not dominate each other) or
/// `index` is out of range. O(n) per call.
int dominatingPlan(const QVector<FrontierPoint>& points, int index);

}  // namespace matmulviz::ui
