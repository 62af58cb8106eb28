#pragma once
// The memory timeline of the current plan, derived from the graph (BudgetTimelineModel): bytes
// alive after each step of the forward and then the backward, stacked by band (saved for the
// backward, recomputed in the backward, other forward values, backward values and gradients),
// the start of the backward and the peak marked. Labelled as derived, not measured. Hover a step
// for its node and what is alive.

#include "ui/charts/chart_view.h"

#include <QPointer>

namespace matmulviz::ui {

class BudgetTimelineModel;

class BudgetTimelineChart : public ChartView {
  Q_OBJECT
 public:
  explicit BudgetTimelineChart(QWidget* parent = nullptr);
  void setModel(const BudgetTimelineModel* model);
  QString chartName() const override { return QStringLiteral("budget-timeline"); }
  /// step, pass, node, op, the four bands and the total in bytes.
  QString csv() const override;

 protected:
  void rebuild() override;
  QString toolTipAt(const QPoint& pos) const override;

 private:
  void setupAxes();
  void addBands();
  void markPhases();

  QPointer<const BudgetTimelineModel> model_;
  QMetaObject::Connection resetConn_;
};

}  // namespace matmulviz::ui
