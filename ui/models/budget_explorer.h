#pragma once
// The Budget view's state: one joint graph (core/partitioner, from an example now, from a traced
// Python function later), the activation memory budget and the knapsack solver, the plan
// PyTorch's partitioner makes for them (BudgetPlanner, re-planned on every change), and the sweep
// of budgets 0, 0.01, ..., 1 reduced to one point per distinct plan (the Pareto frontier). Also
// what the charts need to explain a plan: which nodes the forward runs, which the backward runs,
// and each drawn node's role (input, parameter, saved, recomputed, ...). Qt Core only.

#include "core/partitioner/budget.h"
#include "core/partitioner/joint_graph.h"

#include <QObject>
#include <QString>
#include <QVector>

#include <memory>

namespace matmulviz::ui {

/// A built-in joint graph the Budget view offers.
struct BudgetExample {
  QString key;    ///< "mm-cos-chain": for the command line
  QString title;  ///< "mm + cos chain, 5 layers, 512 x 512": for people
};
QVector<BudgetExample> budgetExamples();
/// The graph of example `key`; nullptr when there is no such example.
std::shared_ptr<const partitioner::JointGraph> makeBudgetExample(const QString& key);

/// Plans `graph` (one read from a file) at every budget the explorer sweeps, with both solvers,
/// so that a graph the planner refuses is refused before the explorer holds it. Throws the
/// planner's std::exception (std::overflow_error for sizes beyond 64-bit flow arithmetic,
/// std::logic_error for a graph whose backward needs an unsaved input).
void checkPlannable(const partitioner::JointGraph& graph);

/// FLOPs with a decimal prefix and 3 significant digits: "805 MFLOP", "1.34 GFLOP", "0 FLOP".
QString flopsText(int64_t flops);

/// What a forward node is under the current plan (the Budget view colours nodes by it).
enum class NodeRole {
  Input,         ///< a forward input (kept alive by the caller anyway)
  Parameter,     ///< a static parameter (kept alive by the module anyway)
  Saved,         ///< saved by the forward for the backward: activation memory
  SavedView,     ///< saved, but a view of an input: no memory beyond the input's
  Recomputed,    ///< run by the forward and run again by the backward
  BackwardOnly,  ///< computed from forward values, but only the backward needs it: runs there
  ForwardOnly,   ///< run by the forward, neither saved nor needed again
};
QString nodeRoleText(NodeRole role);

/// One distinct plan of the sweep.
struct FrontierPoint {
  double budgetLo = 0, budgetHi = 0;  ///< the smallest and largest swept budget giving it
  int64_t activationBytes = 0;        ///< BudgetPlan::activationBytes
  int64_t recomputeFlops = 0;         ///< BudgetPlan::recomputeFlops: extra backward FLOPs
  int64_t backwardFlops = 0;          ///< BudgetPlan::backwardFlops
  partitioner::PlanRoute route = partitioner::PlanRoute::BudgetOne;
  int saved = 0, recomputed = 0;  ///< counts of savedUsed and recomputed
  std::vector<partitioner::NodeId> savedSet;
};

class BudgetExplorer : public QObject {
  Q_OBJECT
 public:
  explicit BudgetExplorer(QObject* parent = nullptr);
  ~BudgetExplorer() override;

  /// Plans `graph` from now on (shared: the explorer keeps it alive); sweeps the budgets and
  /// plans the current budget. Emits graphChanged, frontierChanged and planChanged.
  void setGraph(std::shared_ptr<const partitioner::JointGraph> graph, const QString& title);
  /// Clamped to [0, 1]; re-plans (emits planChanged) when it changes.
  void setBudget(double budget);
  /// Re-sweeps and re-plans.
  void setSolver(partitioner::KnapsackSolver solver);

  bool hasGraph() const { return graph_ != nullptr; }
  const partitioner::JointGraph* graph() const { return graph_.get(); }
  const partitioner::NodeInfo* info() const;
  QString title() const { return title_; }
  double budget() const { return budget_; }
  partitioner::KnapsackSolver solver() const { return solver_; }
  const partitioner::BudgetPlan& plan() const { return plan_; }
  /// Milliseconds the last plan took.
  double planMs() const { return planMs_; }

  /// Distinct plans over the budgets 0, 0.01, ..., 1, in budget order.
  const QVector<FrontierPoint>& frontier() const { return frontier_; }
  /// The frontier point with the current plan's saved values; -1 when none has them.
  int currentFrontierIndex() const;
  /// The budgets swept: sweepSteps() + 1 of them, 0 to 1.
  static int sweepSteps() { return 100; }

  /// The nodes the Budget view draws: every node computable without a tangent (primals, the
  /// forward graph, and forward-side values only the backward uses), graph order.
  const QVector<partitioner::NodeId>& forwardNodes() const { return forwardNodes_; }
  /// The nodes the forward runs under the plan (what the forward outputs and the saved values
  /// need, primals aside), graph order.
  const QVector<partitioner::NodeId>& forwardProgram() const { return forwardProgram_; }
  /// The nodes the extracted backward runs (from the saved values and tangents to the
  /// gradients), in the order PyTorch runs them after reordering_to_mimic_autograd_engine: from
  /// the first user of a tangent on, in graph order, each node preceded by the recomputed nodes
  /// it still needs.
  const QVector<partitioner::NodeId>& backwardProgram() const { return backwardProgram_; }
  NodeRole role(partitioner::NodeId node) const;
  bool isSaved(partitioner::NodeId node) const;
  /// The node's value lives in an input's storage (an input, or a view of one).
  bool inInputStorage(partitioner::NodeId node) const;

  /// The plan in plain words: what is kept, what is recomputed at what cost, and why.
  QString summary() const;
  /// The route in words a student understands.
  static QString routeText(partitioner::PlanRoute route);

 signals:
  void graphChanged();
  void frontierChanged();
  void planChanged();

 private:
  void replan();
  void sweep();
  void derivePrograms();
  void orderBackward();

  std::shared_ptr<const partitioner::JointGraph> graph_;
  std::unique_ptr<partitioner::BudgetPlanner> planner_;
  QString title_;
  double budget_ = 0.5;
  partitioner::KnapsackSolver solver_ = partitioner::KnapsackSolver::Dp;
  partitioner::BudgetPlan plan_;
  double planMs_ = 0;
  QVector<FrontierPoint> frontier_;
  QVector<partitioner::NodeId> forwardNodes_, forwardProgram_, backwardProgram_;
  std::vector<char> saved_, inForward_, inBackward_;
  std::vector<std::optional<int64_t>> inputStorages_;  ///< storages of the primals
};

}  // namespace matmulviz::ui
