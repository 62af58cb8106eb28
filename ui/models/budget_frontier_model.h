#pragma once
// The Pareto frontier of a BudgetExplorer's sweep as a table, one row per distinct plan in budget
// order: the budgets that give it, activation memory, extra backward FLOPs (recomputation), all
// backward FLOPs, the route, how many values are saved and ops recomputed, and whether it is the
// current plan. Resets on a new sweep; on a new plan only the Current column changes.

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
    Current,          ///< "current" or ""; RawRole: bool
    ColumnCount
  };
  static constexpr int RawRole = Qt::UserRole + 1;

  explicit BudgetFrontierModel(QObject* parent = nullptr);
  void setExplorer(const BudgetExplorer* explorer);

  const FrontierPoint& point(int row) const { return explorer_->frontier()[row]; }
  int currentRow() const { return explorer_ ? explorer_->currentFrontierIndex() : -1; }
  /// "budgets 0.30 to 0.45: 3 MiB saved, +805 MFLOP recomputed (knapsack)".
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

}  // namespace matmulviz::ui
