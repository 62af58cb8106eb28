// The activation memory budget on the mm+cos chain (hand-worked: 1 layer of [16, 16]; 5 layers of
// [512, 512] as in issue 13's example), its error text, determinism, and the properties PyTorch's
// rules guarantee over a budget sweep (not "fewer bytes for a smaller budget": they do not).

#include "core/partitioner/budget.h"
#include "core/partitioner/example_graphs.h"

#include <QtTest/QtTest>

#include <algorithm>
#include <cmath>
#include <stdexcept>

using namespace matmulviz::partitioner;

namespace {

constexpr int64_t kMiB = 1048576;
constexpr int64_t kLayerFlops = 2LL * 512 * 512 * 512;  // one [512, 512] @ [512, 512]

QStringList names(const JointGraph& g, const std::vector<NodeId>& ids) {
  QStringList out;
  for (NodeId i : ids) out << QString::fromStdString(g.node(i).name);
  return out;
}

QString budgetError(double b) {
  try {
    chooseSavedValues(mmCosChain(1, 4), b);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "no error";
}

int rank(PlanRoute r) {
  switch (r) {
    case PlanRoute::BudgetZero:
      return 0;
    case PlanRoute::NoCandidates:
    case PlanRoute::Knapsack:
      return 1;
    case PlanRoute::Aggressive:
      return 2;
    case PlanRoute::MoreAggressive:
      return 3;
    default:
      return 4;
  }
}

}  // namespace

class TestPartitionerBudget : public QObject {
  Q_OBJECT

 private slots:
  // One layer of [16, 16] (1024 bytes per tensor). Default cut R = {x, mm, t(w), t(cos)}
  // (4096 bytes; cos is banned as materialized in the backward and loses the tie to t(cos)).
  // M = A = {x, mm, t(w)}: ratio (3072e-9 - 2048e-9) / (4096e-9 - 2048e-9) = 0.4999999999999999
  // in double. Candidate: the forward mm only (x, w are inputs; sum never reaches the backward),
  // memory 0.5 -> 5000 quanta, runtime 2 * 16^3 = 8192.
  void oneLayerChain() {
    const JointGraph g = mmCosChain(1, 16);
    BudgetPlanner planner(g);
    const BudgetPlan zero = planner.plan(0);
    QCOMPARE(names(g, zero.saved), (QStringList{"primals_1", "primals_2"}));
    QCOMPARE(names(g, zero.recomputed), (QStringList{"cos", "mm"}));
    QCOMPARE(zero.recomputeFlops, int64_t(8192));
    QCOMPARE(zero.backwardFlops, int64_t(3 * 8192));
    const BudgetPlan one = planner.plan(1);
    QCOMPARE(names(g, one.saved), (QStringList{"primals_1", "mm", "t", "t_1"}));
    QCOMPARE(one.savedBytes, int64_t(4096));
    QVERIFY(one.recomputed.empty());
    // Q = 2500 < 5000: the mm is unbanned and the cut saves the inputs again.
    const BudgetPlan quarter = planner.plan(0.25);
    QCOMPARE(quarter.route, PlanRoute::Knapsack);
    QCOMPARE(names(g, quarter.candidates), (QStringList{"mm"}));
    QCOMPARE(names(g, quarter.knapsackUnbanned), (QStringList{"mm"}));
    QCOMPARE(names(g, quarter.saved), (QStringList{"primals_1", "primals_2"}));
    QCOMPARE(quarter.knapsackRuntime, 0.0);
    // round(0.49996 * 10000) = 5000: the mm fits and stays banned.
    const BudgetPlan edge = planner.plan(0.49996);
    QCOMPARE(edge.route, PlanRoute::Knapsack);
    QVERIFY(edge.knapsackUnbanned.empty());
    QCOMPARE(names(g, edge.saved), (QStringList{"primals_1", "mm", "t"}));
    QCOMPARE(edge.knapsackRuntime, 8192.0);
    QCOMPARE(edge.memoryRatio, 0.4999999999999999);
    // ratio(M) = 0.4999999999999999 < 0.5: budget 0.5 takes M without a knapsack.
    const BudgetPlan half = planner.plan(0.5);
    QCOMPARE(half.route, PlanRoute::MoreAggressive);
    QCOMPARE(names(g, half.saved), (QStringList{"primals_1", "mm", "t"}));
    QCOMPARE(names(g, half.recomputed), (QStringList{"cos"}));
    // The greedy solver agrees here (the mm does not fit 0.25 either).
    QCOMPARE(names(g, planner.plan(0.25, KnapsackSolver::Greedy).saved),
             (QStringList{"primals_1", "primals_2"}));
  }

  // Five layers of [512, 512] float32 (1 MiB each): lo = 6 MiB (x and 5 weights), hi = 16 MiB
  // (x, 5 mm, 5 t(w), 5 t(cos)); candidates: the 5 forward mm, 0.1 each (1000 quanta), runtime
  // 2 * 512^3. For b = k/20 < 0.5 the dp keeps floor(10 b) of them, the first in graph order
  // (ties drop later items); every kept mm also saves its layer's t(w) instead of w. From 0.5
  // (ratio(M) = 0.49999999999999994 < 0.5) M saves x, 5 mm, 5 t(w).
  void fiveLayerChain() {
    const JointGraph g = mmCosChain(5, 512);
    BudgetPlanner planner(g);
    for (int i = 0; i <= 20; ++i) {
      const double b = i / 20.0;
      const BudgetPlan p = planner.plan(b);
      const int kept = std::min(i / 2, 5);
      if (i == 0) {
        QCOMPARE(p.route, PlanRoute::BudgetZero);
      } else if (i < 10) {
        QCOMPARE(p.route, PlanRoute::Knapsack);
        QCOMPARE(names(g, p.candidates), (QStringList{"mm", "mm_1", "mm_2", "mm_3", "mm_4"}));
        QCOMPARE(int(p.knapsackUnbanned.size()), 5 - kept);
        QCOMPARE(p.knapsackRuntime, double(kept * kLayerFlops));
        QCOMPARE(p.savedBytes, (6 + kept) * kMiB);
        QCOMPARE(p.activationBytes, kept * kMiB);
        QCOMPARE(p.recomputeFlops, (5 - kept) * kLayerFlops);
      } else if (i < 20) {
        QCOMPARE(p.route, PlanRoute::MoreAggressive);
        QCOMPARE(p.savedBytes, 11 * kMiB);
        QCOMPARE(p.activationBytes, 5 * kMiB);
        QCOMPARE(names(g, p.recomputed), (QStringList{"cos", "cos_1", "cos_2", "cos_3", "cos_4"}));
        QCOMPARE(p.recomputeFlops, int64_t(0));
      } else {
        QCOMPARE(p.route, PlanRoute::BudgetOne);
        QCOMPARE(p.savedBytes, 16 * kMiB);
        QCOMPARE(p.activationBytes, 10 * kMiB);  // 5 mm + 5 t(cos); t(w) lives in the inputs
      }
    }
    const BudgetPlan two = planner.plan(0.2);
    QCOMPARE(names(g, two.saved), (QStringList{"primals_1", "primals_4", "primals_5", "primals_6",
                                               "mm", "mm_1", "t_6", "t_8"}));
  }

  // What the rules guarantee over a sweep: the route only moves forward (b = 0, knapsack or no
  // candidates, A, M, b = 1), because ratio(M) < b and ratio(A) < b stay true as b grows; the dp
  // optimum never decreases with the capacity; the candidates the knapsack kept fit round(b * S).
  void sweepProperties() {
    for (const JointGraph& g : {mmCosChain(5, 512), transformerLike({.layers = 4, .seq = 256})}) {
      BudgetPlanner planner(g);
      int lastRank = -1;
      double lastRuntime = -1;
      for (int i = 0; i <= 40; ++i) {
        const double b = i / 40.0;
        const BudgetPlan p = planner.plan(b);
        QVERIFY(rank(p.route) >= lastRank);
        lastRank = rank(p.route);
        if (p.route != PlanRoute::Knapsack) continue;
        QVERIFY(p.knapsackRuntime >= lastRuntime);
        lastRuntime = p.knapsackRuntime;
        const double span = static_cast<double>(bytesOf(g, planner.plan(1).saved)) / 1e9 -
                            static_cast<double>(bytesOf(g, planner.info().inputs)) / 1e9;
        int64_t quanta = 0;
        for (NodeId c : p.candidates)
          if (std::find(p.knapsackUnbanned.begin(), p.knapsackUnbanned.end(), c) ==
              p.knapsackUnbanned.end())
            quanta += std::llround(
                std::nearbyint(static_cast<double>(g.node(c).bytes) / 1e9 / span * 10000));
        QVERIFY(quanta <= std::llround(std::nearbyint(b * 10000)));
      }
      QVERIFY(lastRuntime >= 0);  // the sweep did reach the knapsack
    }
  }

  void budgetOutOfRange() {
    const QString prefix =
        "The valid ranges for memory budget are 0 <= m <= 1. The provided value is ";
    QCOMPARE(budgetError(1.5), prefix + "1.5");
    QCOMPARE(budgetError(-0.1), prefix + "-0.1");
    QCOMPARE(budgetError(2.0), prefix + "2.0");
    QCOMPARE(budgetError(-1e-07), prefix + "-1e-07");
    QCOMPARE(budgetError(std::nan("")), prefix + "nan");
    QCOMPARE(budgetError(1.0), QString("no error"));
  }

  // Fresh planners and a reused one give identical plans for every budget.
  void deterministic() {
    const JointGraph g = transformerLike({.layers = 6, .seq = 256});
    BudgetPlanner reused(g);
    for (int i = 0; i <= 20; ++i) {
      const double b = i / 20.0;
      const BudgetPlan a = chooseSavedValues(g, b), c = reused.plan(b);
      const BudgetPlan d = BudgetPlanner(g).plan(b);
      QCOMPARE(a.saved, c.saved);
      QCOMPARE(a.saved, d.saved);
      QCOMPARE(a.recomputed, d.recomputed);
      QCOMPARE(a.knapsackUnbanned, d.knapsackUnbanned);
      QCOMPARE(a.activationBytes, c.activationBytes);
    }
  }

  // The transformer-like graph (2 layers, tokens 1024): candidates are the banned forward mm and
  // SDPA nodes the backward needs, sorted by size (mm [1024, 4096] 8 MiB; the SDPA tuple counts
  // output + logsumexp, 2 MiB + 64 KiB; mm [1024, 1024] 2 MiB), graph order among equals. The last
  // layer's second mm (mm_3) only reaches the loss (dist 10^9): no candidate.
  void transformerCandidates() {
    const TransformerShape shape{.layers = 2, .seq = 256};
    const JointGraph g = transformerLike(shape);
    const BudgetPlan p = chooseSavedValues(g, 0.1);
    QCOMPARE(p.route, PlanRoute::Knapsack);
    QCOMPARE(names(g, p.candidates),
             (QStringList{"mm", "mm_2", "_scaled_dot_product_efficient_attention",
                          "_scaled_dot_product_efficient_attention_1", "mm_1"}));
  }
};

QTEST_GUILESS_MAIN(TestPartitionerBudget)
#include "test_partitioner_budget.moc"
