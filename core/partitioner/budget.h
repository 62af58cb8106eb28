#pragma once
// PyTorch's activation memory budget (PyTorch, torch/_functorch/partitioners.py,
// choose_saved_values_set, with _optimize_runtime_with_given_memory and estimate_runtime), 2.8-era
// semantics: knapsack candidates in graph order (the order banned_nodes was filled), then a stable
// sort by size, descending; parameters free to save (0 weight); input storages excluded from the
// candidates. For a budget b in [0, 1]:
//   b == 0              save the inputs (all primals);
//   R = the default cut (every ban heuristic on); b == 1: save R;
//   lo = bytes(inputs) / 1e9, hi = bytes(R) / 1e9 (sums of _size_of); hi <= lo: save R;
//   ratio(S) = (bytes(S) / 1e9 - lo) / (hi - lo);
//   M = the cut without the far-apart, long-fusible-chain and materialized-backward bans;
//       ratio(M) < b: save M;
//   A = M's options without the allowlist ban (only primals, random, compute-intensive ops and
//       reductions banned); ratio(A) < b: save A;
//   candidates = A's banned nodes with dist_from_bw < 10^9 whose storage is not an input's, sorted
//       by size (stable, descending); none: save the inputs;
//   knapsack (dp by default) over memory_i = (size_i / 1e9) / (hi - lo), runtime_i =
//       max(flops_i, 1) (the "flops" estimator), capacity b; the candidates it leaves out lose
//       their ban (dont_ban) and one more cut with A's options gives the saved values.
// The final ratio can miss b: the knapsack only unbans, and bytes of values that are not
// candidates were never budgeted. Plans are deterministic.

#include "core/partitioner/joint_graph.h"
#include "core/partitioner/min_cut.h"
#include "core/partitioner/node_info.h"

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace matmulviz::partitioner {

enum class KnapsackSolver { Dp, Greedy };

/// Which step of choose_saved_values_set produced the plan (for explaining it).
enum class PlanRoute {
  NoBackward,       ///< no required_bw node: nothing to save (PyTorch runs default_partition)
  BudgetZero,       ///< b == 0: the inputs
  BudgetOne,        ///< b == 1: the default cut R
  DefaultNotAbove,  ///< hi <= lo: R, the budget is ignored
  MoreAggressive,   ///< ratio(M) < b
  Aggressive,       ///< ratio(A) < b
  NoCandidates,     ///< nothing left to trade: the inputs (everything recomputed)
  Knapsack,         ///< knapsack + final cut
};
std::string_view planRouteName(PlanRoute route);

struct BudgetPlan {
  double budget = 1;
  PlanRoute route = PlanRoute::BudgetOne;
  std::vector<NodeId> saved;  ///< choose_saved_values_set's answer (graph order)
  /// The saved values the extracted backward actually reads (PyTorch drops the others).
  std::vector<NodeId> savedUsed;
  /// Required-forward nodes the backward recomputes (not saved, needed by a gradient), graph order.
  std::vector<NodeId> recomputed;
  int64_t savedBytes = 0;  ///< sum of _size_of over `saved` (PyTorch's estimate)
  /// Sum of _size_of over `savedUsed` whose storage is not an input's: what the forward keeps
  /// alive beyond the inputs (views of one storage are not de-duplicated).
  int64_t activationBytes = 0;
  int64_t recomputeFlops = 0;            ///< FLOPs of `recomputed`
  int64_t backwardFlops = 0;             ///< FLOPs of every node the extracted backward runs
  double memoryRatio = 0;                ///< (bytes(saved)/1e9 - lo) / (hi - lo); 0 if hi <= lo
  std::vector<NodeId> candidates;        ///< knapsack items, in knapsack order (Knapsack route)
  std::vector<NodeId> knapsackUnbanned;  ///< candidates the knapsack allowed to recompute
  double knapsackRuntime = 0;            ///< the solver's optimum (runtime of kept candidates)
};

/// Plans budgets for one graph, keeping the budget-independent cuts (R, M, A, candidates)
/// between calls. Not thread-safe.
class BudgetPlanner {
 public:
  /// `base`: the config's ban options (aggressive_recomputation is base with the first four off).
  /// The planner keeps a reference: `graph` must outlive it.
  explicit BudgetPlanner(const JointGraph& graph, MinCutOptions base = {});
  BudgetPlanner(JointGraph&&, MinCutOptions = {}) = delete;
  /// The plan for budget b. Throws std::runtime_error (PyTorch raises RuntimeError) unless
  /// 0 <= b <= 1, with PyTorch's text "The valid ranges for memory budget are 0 <= m <= 1. The
  /// provided value is <b>" (b as Python's repr writes a float). NaN is refused too (PyTorch's
  /// comparisons let it through). Throws std::logic_error if a plan leaves the backward needing
  /// an input that is not saved (cannot happen for graphs the builder accepts).
  BudgetPlan plan(double budget, KnapsackSolver solver = KnapsackSolver::Dp);
  const NodeInfo& info() const { return info_; }

 private:
  const MinCutResult& defaultCut();
  const MinCutResult& moreAggressiveCut();
  const MinCutResult& aggressiveCut();
  double ratio(const std::vector<NodeId>& saved) const;
  std::vector<NodeId> choose(double budget, KnapsackSolver solver, BudgetPlan& plan);
  std::vector<NodeId> knapsack(double budget, KnapsackSolver solver, BudgetPlan& plan);
  void describe(BudgetPlan& plan) const;

  const JointGraph& graph_;
  MinCutOptions base_;
  NodeInfo info_;
  std::optional<MinCutResult> default_, moreAggressive_, aggressive_;
  std::vector<NodeId> candidates_;
  double lo_ = 0, hi_ = 0;
};

/// choose_saved_values_set for one budget (a BudgetPlanner used once).
BudgetPlan chooseSavedValues(const JointGraph& graph, double budget,
                             KnapsackSolver solver = KnapsackSolver::Dp);

/// PyTorch's check of a budget (choose_saved_values_set): throws std::runtime_error with its text,
/// "The valid ranges for memory budget are 0 <= m <= 1. The provided value is <b>" (b as Python's
/// repr writes a float), unless 0 <= b <= 1; NaN is refused too.
void checkMemoryBudget(double budget);

/// estimate_runtime with the "flops" estimator: max(flops, 1).
double estimateRuntime(const Node& node);

/// Sum of _size_of over `nodes`, in bytes.
int64_t bytesOf(const JointGraph& graph, const std::vector<NodeId>& nodes);

}  // namespace matmulviz::partitioner
