#pragma once
// The Budget view: how PyTorch's partitioner trades activation memory for recomputation under
// torch._functorch.config.activation_memory_budget. A joint graph (a built-in example now; a
// traced function's later, through setGraph) is planned live as the budget slider (or its spin
// box) moves, with the knapsack solver of choice: the forward graph coloured by the plan, a
// summary in words, the Pareto frontier of all budgets (click a point to choose its plan) and
// the plan's memory timeline derived from the graph.

#include "core/partitioner/joint_graph.h"

#include <QWidget>

#include <memory>

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QSlider;

namespace matmulviz::ui {

class BudgetExplorer;
class BudgetFrontierChart;
class BudgetFrontierModel;
class BudgetGraphChart;
class BudgetNodesModel;
class BudgetTimelineChart;
class BudgetTimelineModel;

class BudgetView : public QWidget {
  Q_OBJECT
 public:
  explicit BudgetView(QWidget* parent = nullptr);

  /// Plans `graph` (e.g. one a tracer built); the example box shows `title`.
  void setGraph(std::shared_ptr<const partitioner::JointGraph> graph, const QString& title);
  /// Shows the built-in example `key` (budgetExamples()); false when there is none.
  bool selectExample(const QString& key);
  /// Moves the slider and spin box and re-plans (clamped to [0, 1], rounded to 0.01).
  void setBudget(double budget);
  double budget() const;
  void setPresentationMode(bool on);

  BudgetExplorer* explorer() const { return explorer_; }
  BudgetGraphChart* graphChart() const { return graph_; }
  BudgetFrontierChart* frontierChart() const { return frontier_; }
  BudgetTimelineChart* timelineChart() const { return timeline_; }
  BudgetNodesModel* nodesModel() const { return nodes_; }
  BudgetFrontierModel* frontierModel() const { return frontierModel_; }
  BudgetTimelineModel* timelineModel() const { return timelineModel_; }
  QString summary() const;

 private:
  QWidget* buildControls();
  void onPlanChanged();

  BudgetExplorer* explorer_ = nullptr;
  BudgetNodesModel* nodes_ = nullptr;
  BudgetFrontierModel* frontierModel_ = nullptr;
  BudgetTimelineModel* timelineModel_ = nullptr;
  QComboBox* example_ = nullptr;
  QComboBox* solver_ = nullptr;
  QSlider* slider_ = nullptr;
  QDoubleSpinBox* spin_ = nullptr;
  QLabel* summary_ = nullptr;
  BudgetGraphChart* graph_ = nullptr;
  BudgetFrontierChart* frontier_ = nullptr;
  BudgetTimelineChart* timeline_ = nullptr;
};

}  // namespace matmulviz::ui
