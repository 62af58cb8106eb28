// choose_saved_values_set (PyTorch, torch/_functorch/partitioners.py), 2.8-era semantics; the
// rules are listed in budget.h.
#include "core/partitioner/budget.h"

#include "core/partitioner/knapsack.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>
#include <stdexcept>
#include <string>

namespace matmulviz::partitioner {

namespace {

// Python's repr of a float: the shortest round-trip digits, ".0" after an integral value.
std::string pythonRepr(double v) {
  char buf[64];
  const auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
  std::string s(buf, end);
  if (s.find_first_of(".eni") == std::string::npos) s += ".0";
  return s;
}

MinCutOptions moreAggressive(MinCutOptions o) {
  o.banIfUsedFarApart = false;
  o.banIfLongFusibleChains = false;
  o.banIfMaterializedBackward = false;
  return o;
}

MinCutOptions aggressive(MinCutOptions o) {
  o = moreAggressive(o);
  o.banIfNotInAllowlist = false;
  return o;
}

}  // namespace

std::string_view planRouteName(PlanRoute route) {
  switch (route) {
    case PlanRoute::NoBackward:
      return "no backward";
    case PlanRoute::BudgetZero:
      return "budget 0: save the inputs";
    case PlanRoute::BudgetOne:
      return "budget 1: default cut";
    case PlanRoute::DefaultNotAbove:
      return "default cut saves no more than the inputs";
    case PlanRoute::MoreAggressive:
      return "cut without the far-apart/chain/materialized bans";
    case PlanRoute::Aggressive:
      return "cut without the allowlist ban";
    case PlanRoute::NoCandidates:
      return "no knapsack candidates: save the inputs";
    case PlanRoute::Knapsack:
      return "knapsack";
  }
  return "?";
}

double estimateRuntime(const Node& node) {
  return static_cast<double>(std::max<int64_t>(node.flops, 1));
}

int64_t bytesOf(const JointGraph& graph, const std::vector<NodeId>& nodes) {
  int64_t sum = 0;
  for (NodeId n : nodes) sum += graph.node(n).bytes;
  return sum;
}

BudgetPlanner::BudgetPlanner(const JointGraph& graph, MinCutOptions base)
    : graph_(graph), base_(base), info_(classifyNodes(graph)) {}

const MinCutResult& BudgetPlanner::defaultCut() {
  if (!default_) {
    default_ = solveMinCut(graph_, info_, base_);
    lo_ = static_cast<double>(bytesOf(graph_, info_.inputs)) / 1e9;
    hi_ = static_cast<double>(bytesOf(graph_, default_->saved)) / 1e9;
  }
  return *default_;
}

const MinCutResult& BudgetPlanner::moreAggressiveCut() {
  if (!moreAggressive_) moreAggressive_ = solveMinCut(graph_, info_, moreAggressive(base_));
  return *moreAggressive_;
}

const MinCutResult& BudgetPlanner::aggressiveCut() {
  if (aggressive_) return *aggressive_;
  aggressive_ = solveMinCut(graph_, info_, aggressive(base_));
  std::set<std::optional<int64_t>> inputStorages;
  for (NodeId i : info_.inputs) inputStorages.insert(graph_.node(i).storage);
  for (NodeId b : aggressive_->banned)
    if (info_.dist(b) < kFarFromBackward && !inputStorages.count(graph_.node(b).storage))
      candidates_.push_back(b);
  std::stable_sort(candidates_.begin(), candidates_.end(),
                   [&](NodeId a, NodeId b) { return graph_.node(a).bytes > graph_.node(b).bytes; });
  return *aggressive_;
}

double BudgetPlanner::ratio(const std::vector<NodeId>& saved) const {
  return (static_cast<double>(bytesOf(graph_, saved)) / 1e9 - lo_) / (hi_ - lo_);
}

std::vector<NodeId> BudgetPlanner::knapsack(double budget, KnapsackSolver solver,
                                            BudgetPlan& plan) {
  std::vector<double> memory, runtime;
  for (NodeId c : candidates_) {
    memory.push_back((static_cast<double>(graph_.node(c).bytes) / 1e9) / (hi_ - lo_));
    runtime.push_back(estimateRuntime(graph_.node(c)));
  }
  const double capacity = std::max(budget, 0.0);
  const KnapsackResult k = solver == KnapsackSolver::Dp ? dpKnapsack(memory, runtime, capacity)
                                                        : greedyKnapsack(memory, runtime, capacity);
  plan.candidates = candidates_;
  plan.knapsackRuntime = k.runtime;
  for (int i : k.recompute) plan.knapsackUnbanned.push_back(candidates_[static_cast<size_t>(i)]);
  return solveMinCut(graph_, info_, aggressive(base_), plan.knapsackUnbanned).saved;
}

std::vector<NodeId> BudgetPlanner::choose(double budget, KnapsackSolver solver, BudgetPlan& plan) {
  auto decided = [&plan](PlanRoute route, const std::vector<NodeId>& saved) {
    plan.route = route;
    return saved;
  };
  if (!info_.hasBackward()) return decided(PlanRoute::NoBackward, {});
  if (budget == 0) return decided(PlanRoute::BudgetZero, info_.inputs);
  const MinCutResult& r = defaultCut();
  if (budget == 1) return decided(PlanRoute::BudgetOne, r.saved);
  if (hi_ <= lo_) return decided(PlanRoute::DefaultNotAbove, r.saved);
  const MinCutResult& m = moreAggressiveCut();
  if (ratio(m.saved) < budget) return decided(PlanRoute::MoreAggressive, m.saved);
  const MinCutResult& a = aggressiveCut();
  if (ratio(a.saved) < budget) return decided(PlanRoute::Aggressive, a.saved);
  if (candidates_.empty()) return decided(PlanRoute::NoCandidates, info_.inputs);
  plan.route = PlanRoute::Knapsack;
  return knapsack(budget, solver, plan);
}

// The backward PyTorch would extract: from the gradients back to saved values and tangents.
void BudgetPlanner::describe(BudgetPlan& plan) const {
  std::vector<char> saved(ix(graph_.size()), 0), seen(ix(graph_.size()), 0);
  for (NodeId s : plan.saved) saved[ix(s)] = 1;
  std::vector<NodeId> pending;
  for (NodeId g : graph_.gradOutputs())
    if (g != kNoNode) pending.push_back(g);
  while (!pending.empty()) {
    const NodeId n = pending.back();
    pending.pop_back();
    if (seen[ix(n)]) continue;
    seen[ix(n)] = 1;
    const Node& node = graph_.node(n);
    if (saved[ix(n)] || node.kind == NodeKind::Tangent) continue;
    if (node.kind != NodeKind::CallFunction)
      throw std::logic_error("partitioner: the backward needs " + node.name +
                             ", which is not saved");
    pending.insert(pending.end(), node.args.begin(), node.args.end());
    pending.insert(pending.end(), node.nestedArgs.begin(), node.nestedArgs.end());
  }
  std::set<std::optional<int64_t>> inputStorages;
  for (NodeId i : info_.inputs) inputStorages.insert(graph_.node(i).storage);
  for (NodeId n = 0; n < graph_.size(); ++n) {
    if (!seen[ix(n)]) continue;
    const Node& node = graph_.node(n);
    if (saved[ix(n)]) {
      plan.savedUsed.push_back(n);
      if (!inputStorages.count(node.storage)) plan.activationBytes += node.bytes;
    } else if (node.kind == NodeKind::CallFunction) {
      plan.backwardFlops += node.flops;
      if (info_.isRequiredFw(n)) {
        plan.recomputed.push_back(n);
        plan.recomputeFlops += node.flops;
      }
    }
  }
  plan.savedBytes = bytesOf(graph_, plan.saved);
}

void checkMemoryBudget(double budget) {
  if (!(budget >= 0 && budget <= 1))
    throw std::runtime_error(
        "The valid ranges for memory budget are 0 <= m <= 1. The provided value is " +
        pythonRepr(budget));
}

BudgetPlan BudgetPlanner::plan(double budget, KnapsackSolver solver) {
  checkMemoryBudget(budget);
  BudgetPlan plan;
  plan.budget = budget;
  plan.saved = choose(budget, solver, plan);
  describe(plan);
  if (plan.route != PlanRoute::NoBackward) {
    defaultCut();
    if (hi_ > lo_) plan.memoryRatio = ratio(plan.saved);
  }
  return plan;
}

BudgetPlan chooseSavedValues(const JointGraph& graph, double budget, KnapsackSolver solver) {
  return BudgetPlanner(graph).plan(budget, solver);
}

}  // namespace matmulviz::partitioner
