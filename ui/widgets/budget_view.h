#pragma once
// The Budget view: how PyTorch's partitioner trades activation memory for recomputation under
// torch._functorch.config.activation_memory_budget. A joint graph (a built-in example, a traced
// function's: "Trace a function..." or one of the repository's examples/budget_*.py in the graph
// box, traced by BudgetTracer in a separate process, or a graph file opened with File > Open)
// is planned live as the budget slider (or its spin
// box) moves, with the knapsack solver of choice: the forward graph coloured by the plan, a
// summary in words, the Pareto frontier of all budgets (click a point to choose its plan) and
// the plan's memory timeline derived from the graph.

#include "core/partitioner/joint_graph.h"

#include <QHash>
#include <QWidget>

#include <memory>

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSlider;

namespace matmulviz::ui {

class BudgetExplorer;
class BudgetFrontierChart;
class BudgetFrontierModel;
class BudgetGraphChart;
class BudgetNodesModel;
class BudgetTimelineChart;
class BudgetTimelineModel;
class BudgetTracer;

/// The graph box's item data: an example's key, or one of these prefixes.
inline constexpr const char* kTracePrefix = "trace:";  ///< + a script: traced (function f)
inline constexpr const char* kGraphPrefix = "graph:";  ///< a traced graph, kept by its title

class BudgetView : public QWidget {
  Q_OBJECT
 public:
  explicit BudgetView(QWidget* parent = nullptr);

  /// Plans `graph` (e.g. one a tracer built); the graph box shows `title` (and keeps the graph
  /// under it, to choose it again).
  void setGraph(std::shared_ptr<const partitioner::JointGraph> graph, const QString& title);
  /// Traces `function` of the Python script `script` in a separate process (progress and Cancel
  /// below the controls) and shows its graph; a failure shows a message and keeps the graph
  /// shown. "Trace a function..." asks for both and calls this.
  void traceFunction(const QString& script, const QString& function);
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
  BudgetTracer* tracer() const { return tracer_; }
  QString summary() const;

 private:
  QWidget* buildControls();
  QWidget* buildTraceRow();
  void onPlanChanged();
  void onGraphChosen();
  void askAndTrace();
  void onTraceFailed(const QString& message);
  void showTraceRow(bool on);

  BudgetExplorer* explorer_ = nullptr;
  BudgetNodesModel* nodes_ = nullptr;
  BudgetFrontierModel* frontierModel_ = nullptr;
  BudgetTimelineModel* timelineModel_ = nullptr;
  QComboBox* example_ = nullptr;
  QComboBox* solver_ = nullptr;
  QSlider* slider_ = nullptr;
  QDoubleSpinBox* spin_ = nullptr;
  QLabel* summary_ = nullptr;
  BudgetTracer* tracer_ = nullptr;
  QWidget* traceRow_ = nullptr;
  QLabel* traceText_ = nullptr;
  QProgressBar* traceBusy_ = nullptr;
  QPushButton* traceButton_ = nullptr;
  /// Traced graphs by the title the graph box shows them under.
  QHash<QString, std::shared_ptr<const partitioner::JointGraph>> traced_;
  BudgetGraphChart* graph_ = nullptr;
  BudgetFrontierChart* frontier_ = nullptr;
  BudgetTimelineChart* timeline_ = nullptr;
};

}  // namespace matmulviz::ui
