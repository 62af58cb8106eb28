#pragma once
// The Pareto frontier of a budget sweep (BudgetFrontierModel), as PyTorch's
// visualize_memory_budget_pareto draws it with matplotlib, but interactive: activation memory
// (MiB) against extra backward FLOPs (GFLOP, the recomputation), one point per distinct plan,
// each labelled with its budgets, the current plan ringed. Plans on the Pareto frontier are
// filled discs joined by the frontier's dashed line in memory order; dominated plans
// (BudgetFrontierModel::isDominated) are hollow grey circles outside the line, named so in the
// legend and in their tooltip. Hover a point for its plan; click it to choose it
// (budgetClicked with the smallest budget that gives it).

#include "ui/charts/chart_view.h"

#include <QPointer>
#include <QVector>

class QCPItemText;

namespace matmulviz::ui {

class BudgetFrontierModel;

class BudgetFrontierChart : public ChartView {
  Q_OBJECT
 public:
  explicit BudgetFrontierChart(QWidget* parent = nullptr);
  void setModel(const BudgetFrontierModel* model);
  QString chartName() const override { return QStringLiteral("budget-frontier"); }
  /// budgets, activation bytes, extra backward FLOPs, backward FLOPs, route, dominated (0/1),
  /// current (0/1).
  QString csv() const override;
  bool supportsLogScale() const override { return false; }

  /// The model row of the point nearest to pixel `pos` within `radius` pixels; -1 when none.
  int rowAt(const QPointF& pos, double radius = 12) const;
  /// The pixel position of model row `row`'s point as last drawn.
  QPointF pointPixel(int row) const;
  /// The tooltip the chart shows with the mouse at pixel `pos` (empty: none).
  QString hoverText(const QPoint& pos) const { return toolTipAt(pos); }

 signals:
  void budgetClicked(double budget);

 protected:
  void rebuild() override;
  QString toolTipAt(const QPoint& pos) const override;
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void setupAxes();
  void addPoints();
  void placeLabels();

  QPointer<const BudgetFrontierModel> model_;
  QMetaObject::Connection resetConn_, dataConn_;
  QVector<QCPItemText*> labels_;  ///< one per model row
};

}  // namespace matmulviz::ui
