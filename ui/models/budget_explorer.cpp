#include "ui/models/budget_explorer.h"

#include "core/partitioner/example_graphs.h"
#include "core/util/format_units.h"

#include <QElapsedTimer>

#include <algorithm>
#include <cmath>

namespace matmulviz::ui {

using partitioner::BudgetPlan;
using partitioner::ix;
using partitioner::JointGraph;
using partitioner::KnapsackSolver;
using partitioner::kNoNode;
using partitioner::NodeId;
using partitioner::NodeKind;
using partitioner::PlanRoute;

namespace {

QString size(int64_t bytes) {
  return QString::fromStdString(formatSize(bytes));
}

}  // namespace

QVector<BudgetExample> budgetExamples() {
  return {{QStringLiteral("mm-cos-chain"), QStringLiteral("mm + cos chain, 5 layers, 512 x 512")},
          {QStringLiteral("mm-cos-chain-parameters"),
           QStringLiteral("mm + cos chain, weights as parameters")},
          {QStringLiteral("transformer-2"), QStringLiteral("transformer-like, 2 layers")}};
}

std::shared_ptr<const JointGraph> makeBudgetExample(const QString& key) {
  if (key == QLatin1String("mm-cos-chain"))
    return std::make_shared<const JointGraph>(partitioner::mmCosChain(5, 512));
  if (key == QLatin1String("mm-cos-chain-parameters"))
    return std::make_shared<const JointGraph>(partitioner::mmCosChain(5, 512, true));
  if (key == QLatin1String("transformer-2")) {
    partitioner::TransformerShape shape;
    shape.layers = 2;
    return std::make_shared<const JointGraph>(partitioner::transformerLike(shape));
  }
  return nullptr;
}

QString flopsText(int64_t flops) {
  static const char* const prefixes[] = {"", "k", "M", "G", "T", "P"};
  double v = double(flops);
  int k = 0;
  while (std::abs(v) >= 1000 && k < 5) v /= 1000, ++k;
  return QString::number(v, 'g', 3) + QLatin1Char(' ') + QLatin1String(prefixes[k]) +
         QStringLiteral("FLOP");
}

QString nodeRoleText(NodeRole role) {
  switch (role) {
    case NodeRole::Input:
      return QStringLiteral("input");
    case NodeRole::Parameter:
      return QStringLiteral("parameter");
    case NodeRole::Saved:
      return QStringLiteral("saved for the backward");
    case NodeRole::SavedView:
      return QStringLiteral("saved, a view of an input (free)");
    case NodeRole::Recomputed:
      return QStringLiteral("recomputed in the backward");
    case NodeRole::BackwardOnly:
      return QStringLiteral("computed only in the backward");
    case NodeRole::ForwardOnly:
      return QStringLiteral("forward only (freed early)");
  }
  return {};
}

void checkPlannable(const JointGraph& graph) {
  partitioner::BudgetPlanner planner(graph);
  for (KnapsackSolver solver : {KnapsackSolver::Dp, KnapsackSolver::Greedy})
    for (int i = 0; i <= BudgetExplorer::sweepSteps(); ++i)
      planner.plan(double(i) / BudgetExplorer::sweepSteps(), solver);
}

BudgetExplorer::BudgetExplorer(QObject* parent) : QObject(parent) {}

BudgetExplorer::~BudgetExplorer() = default;

const partitioner::NodeInfo* BudgetExplorer::info() const {
  return planner_ ? &planner_->info() : nullptr;
}

void BudgetExplorer::setGraph(std::shared_ptr<const JointGraph> graph, const QString& title) {
  planner_.reset();
  graph_ = std::move(graph);
  title_ = title;
  forwardNodes_.clear();
  if (graph_) {
    planner_ = std::make_unique<partitioner::BudgetPlanner>(*graph_);
    inputStorages_.clear();
    for (NodeId i : planner_->info().inputs) inputStorages_.push_back(graph_->node(i).storage);
    const auto& tangentDependent = planner_->info().tangentDependent;
    for (NodeId n = 0; n < graph_->size(); ++n)
      if (graph_->node(n).kind != NodeKind::Output && !tangentDependent[ix(n)])
        forwardNodes_.append(n);
  }
  // Everything is computed before anyone is told: a listener reads the new graph's plan.
  sweep();
  replan();
  emit graphChanged();
  emit frontierChanged();
  emit planChanged();
}

void BudgetExplorer::setBudget(double budget) {
  budget = std::clamp(budget, 0.0, 1.0);
  if (budget == budget_) return;
  budget_ = budget;
  replan();
  emit planChanged();
}

void BudgetExplorer::setSolver(KnapsackSolver solver) {
  if (solver == solver_) return;
  solver_ = solver;
  sweep();
  replan();
  emit frontierChanged();
  emit planChanged();
}

void BudgetExplorer::sweep() {
  frontier_.clear();
  if (planner_) {
    for (int i = 0; i <= sweepSteps(); ++i) {
      const double b = double(i) / sweepSteps();
      const BudgetPlan p = planner_->plan(b, solver_);
      auto same = std::find_if(frontier_.begin(), frontier_.end(),
                               [&](const FrontierPoint& f) { return f.savedSet == p.saved; });
      if (same != frontier_.end()) {
        same->budgetHi = b;
        continue;
      }
      frontier_.append({b, b, p.activationBytes, p.recomputeFlops, p.backwardFlops, p.route,
                        static_cast<int>(p.savedUsed.size()), static_cast<int>(p.recomputed.size()),
                        p.saved});
    }
  }
}

void BudgetExplorer::replan() {
  plan_ = BudgetPlan{};
  planMs_ = 0;
  if (planner_) {
    QElapsedTimer timer;
    timer.start();
    plan_ = planner_->plan(budget_, solver_);
    planMs_ = double(timer.nsecsElapsed()) / 1e6;
  }
  derivePrograms();
}

// The forward runs what its outputs and the saved values need; the backward what the gradients
// need, from the saved values and the tangents (as BudgetPlanner::describe walks it).
void BudgetExplorer::derivePrograms() {
  forwardProgram_.clear();
  backwardProgram_.clear();
  const size_t n = graph_ ? ix(graph_->size()) : 0;
  saved_.assign(n, 0);
  inForward_.assign(n, 0);
  inBackward_.assign(n, 0);
  if (!graph_) return;
  for (NodeId s : plan_.savedUsed) saved_[ix(s)] = 1;
  auto walk = [this](std::vector<NodeId> pending, std::vector<char>& seen, bool stopAtSaved) {
    while (!pending.empty()) {
      const NodeId id = pending.back();
      pending.pop_back();
      const partitioner::Node& node = graph_->node(id);
      if (seen[ix(id)] || node.kind != NodeKind::CallFunction) continue;
      if (stopAtSaved && saved_[ix(id)]) continue;
      seen[ix(id)] = 1;
      pending.insert(pending.end(), node.args.begin(), node.args.end());
      pending.insert(pending.end(), node.nestedArgs.begin(), node.nestedArgs.end());
    }
  };
  std::vector<NodeId> roots(graph_->forwardOutputs().begin(), graph_->forwardOutputs().end());
  roots.insert(roots.end(), plan_.savedUsed.begin(), plan_.savedUsed.end());
  walk(roots, inForward_, false);
  roots.clear();
  for (NodeId g : graph_->gradOutputs())
    if (g != kNoNode) roots.push_back(g);
  walk(roots, inBackward_, true);
  for (NodeId id = 0; id < graph_->size(); ++id)
    if (inForward_[ix(id)]) forwardProgram_.append(id);
  orderBackward();
}

// PyTorch's reordering_to_mimic_autograd_engine (partitioners.py): from the first user of a
// tangent on, each backward node in graph order is inserted together with the ancestors it
// still needs (in graph order), so a recomputed value is made just before its first use rather
// than at the start of the backward.
void BudgetExplorer::orderBackward() {
  std::vector<char> placed(inBackward_.size(), 0);
  auto insert = [&](NodeId node) {
    std::vector<NodeId> pending{node}, needed;
    while (!pending.empty()) {
      const NodeId id = pending.back();
      pending.pop_back();
      if (!inBackward_[ix(id)] || placed[ix(id)]) continue;
      placed[ix(id)] = 1;
      needed.push_back(id);
      const partitioner::Node& n = graph_->node(id);
      pending.insert(pending.end(), n.args.begin(), n.args.end());
      pending.insert(pending.end(), n.nestedArgs.begin(), n.nestedArgs.end());
    }
    std::sort(needed.begin(), needed.end());
    for (NodeId id : needed) backwardProgram_.append(id);
  };
  NodeId first = graph_->size();
  for (NodeId t = 0; t < graph_->size(); ++t)
    if (graph_->node(t).kind == NodeKind::Tangent)
      for (NodeId u : graph_->node(t).users)
        if (inBackward_[ix(u)]) first = std::min(first, u);
  for (NodeId id = first; id < graph_->size(); ++id) insert(id);
  for (NodeId g : graph_->gradOutputs())  // the output node: gradients made without a tangent
    if (g != kNoNode) insert(g);
}

bool BudgetExplorer::isSaved(NodeId node) const {
  return node >= 0 && ix(node) < saved_.size() && saved_[ix(node)];
}

NodeRole BudgetExplorer::role(NodeId id) const {
  const partitioner::Node& node = graph_->node(id);
  if (node.kind == NodeKind::Primal)
    return node.staticParameter ? NodeRole::Parameter : NodeRole::Input;
  if (isSaved(id)) return inInputStorage(id) ? NodeRole::SavedView : NodeRole::Saved;
  if (inBackward_[ix(id)])
    return inForward_[ix(id)] ? NodeRole::Recomputed : NodeRole::BackwardOnly;
  return NodeRole::ForwardOnly;
}

bool BudgetExplorer::inInputStorage(NodeId node) const {
  const auto& storage = graph_->node(node).storage;
  return storage &&
         std::find(inputStorages_.begin(), inputStorages_.end(), storage) != inputStorages_.end();
}

int BudgetExplorer::currentFrontierIndex() const {
  for (int i = 0; i < frontier_.size(); ++i)
    if (frontier_[i].savedSet == plan_.saved) return i;
  return -1;
}

QString BudgetExplorer::routeText(PlanRoute route) {
  switch (route) {
    case PlanRoute::NoBackward:
      return QStringLiteral("nothing needs a gradient, so nothing is saved");
    case PlanRoute::BudgetZero:
      return QStringLiteral("budget 0 keeps only the inputs; the backward recomputes the rest");
    case PlanRoute::BudgetOne:
      return QStringLiteral(
          "budget 1 is PyTorch's default: the cheapest cut between forward and backward");
    case PlanRoute::DefaultNotAbove:
      return QStringLiteral(
          "the default plan keeps no more than the inputs, so the budget changes nothing");
    case PlanRoute::MoreAggressive:
      return QStringLiteral(
          "relaxing the default's rules (values used far apart, long chains) already fits the "
          "budget");
    case PlanRoute::Aggressive:
      return QStringLiteral("allowing any cheap op to be recomputed already fits the budget");
    case PlanRoute::NoCandidates:
      return QStringLiteral("no expensive op is left to trade, so only the inputs are kept");
    case PlanRoute::Knapsack:
      return QStringLiteral(
          "the expensive ops (matmuls, attention) compete for the budget: a knapsack keeps "
          "those that avoid the most recompute FLOPs per byte, the rest are recomputed");
  }
  return {};
}

QString BudgetExplorer::summary() const {
  if (!graph_) return tr("Choose a graph to plan.");
  const BudgetPlan& p = plan_;
  // Values that cost memory: not an input, nor a view of one (what activationBytes sums).
  int kept = 0;
  for (NodeId s : p.savedUsed) kept += !inInputStorage(s);
  const QString keeps = kept == 0 ? tr("keeps nothing but its inputs for the backward")
                                  : tr("keeps %1 of activations (%2 values) for the backward")
                                        .arg(size(p.activationBytes))
                                        .arg(kept);
  const int64_t base = p.backwardFlops - p.recomputeFlops;
  QString cost;
  if (p.recomputed.empty())
    cost = tr("the backward recomputes nothing");
  else if (p.recomputeFlops == 0)
    cost = tr("the backward recomputes %1 cheap ops (pointwise ops, views: FlopCounterMode "
              "counts no FLOPs for them)")
               .arg(p.recomputed.size());
  else
    cost = tr("the backward recomputes %1 ops, %2 of extra work%3")
               .arg(p.recomputed.size())
               .arg(flopsText(p.recomputeFlops))
               .arg(base > 0 ? tr(", %1% more than without recomputation")
                                   .arg(100.0 * double(p.recomputeFlops) / double(base), 0, 'f', 0)
                             : QString());
  return tr("Budget %1: the forward %2; %3. Why: %4. Planned in %5 ms.")
      .arg(budget_, 0, 'f', 2)
      .arg(keeps, cost, routeText(p.route))
      .arg(planMs_, 0, 'f', 2);
}

}  // namespace matmulviz::ui
