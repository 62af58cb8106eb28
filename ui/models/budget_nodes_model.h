#pragma once
// The forward graph's nodes under the current plan, one row per node the Budget view draws
// (BudgetExplorer::forwardNodes, graph order): name, op, role (input, parameter, saved,
// recomputed, ...), bytes of its value and FLOPs. Follows a BudgetExplorer: resets on a new
// graph, and on a new plan only the Role column changes (dataChanged).

#include "ui/models/budget_explorer.h"

#include <QAbstractTableModel>
#include <QPointer>

namespace matmulviz::ui {

class BudgetNodesModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Name, Op, Role, Bytes, Flops, ColumnCount };
  static constexpr int RawRole = Qt::UserRole + 1;  ///< unformatted value; Role: int(NodeRole)

  explicit BudgetNodesModel(QObject* parent = nullptr);
  /// Follows `explorer` (not owned; nullptr empties the model).
  void setExplorer(const BudgetExplorer* explorer);
  const BudgetExplorer* explorer() const { return explorer_; }

  partitioner::NodeId nodeAt(int row) const;
  NodeRole roleAt(int row) const;
  /// "mm_1 (mm): 1 MiB, 268 MFLOP; saved for the backward", with what that means.
  QString toolTip(int row) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  QPointer<const BudgetExplorer> explorer_;
  QMetaObject::Connection graphConn_, planConn_;
};

}  // namespace matmulviz::ui
