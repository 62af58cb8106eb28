// Small joint graphs worked out by hand with PyTorch's partitioner rules: node classification,
// node weights, bans, the sink-closest cut (ties go to the value nearest the backward),
// parameters free to save, the optional ban heuristics.

#include "core/partitioner/budget.h"
#include "core/partitioner/min_cut.h"
#include "core/partitioner/node_info.h"

#include <QtTest/QtTest>

using namespace matmulviz::partitioner;

namespace {

constexpr int64_t kB = 1024;  // a [16, 16] float32 tensor

QStringList names(const JointGraph& g, const std::vector<NodeId>& ids) {
  QStringList out;
  for (NodeId i : ids) out << QString::fromStdString(g.node(i).name);
  return out;
}

NodeId id(const JointGraph& g, const char* name) {
  return g.find(name).value();
}

// f(x, w) = sum(mm(cos(x), w)). Backward: grad cos = mm(g, t(w)), grad w = mm(t(cos), g),
// grad x = grad cos * -sin(x). Ids: x 0, w 1, cos 2, mm 3, sum 4, tangents_1 5, expand 6, t 7,
// mm_1 8, t_1 9, mm_2 10, sin 11, neg 12, mul 13, output 14.
JointGraph cosMm(bool wIsParameter) {
  JointGraphBuilder b;
  const NodeId x = b.primal(kB);
  const NodeId w = b.primal(kB, wIsParameter);
  const NodeId c = b.call("cos", {x}, kB);
  const NodeId m = b.call("mm", {c, w}, kB, {.flops = 8192});
  const NodeId loss = b.call("sum", {m}, 4);
  const NodeId g = b.call("expand", {b.tangent(4)}, kB);
  const NodeId gc = b.call("mm", {g, b.call("t", {w}, kB)}, kB, {.flops = 8192});
  const NodeId gw = b.call("mm", {b.call("t", {c}, kB), g}, kB, {.flops = 8192});
  const NodeId neg = b.call("neg", {b.call("sin", {x}, kB)}, kB);
  const NodeId gx = b.call("mul", {gc, neg}, kB);
  b.output({loss}, {gx, gw});
  return b.build();
}

MinCutOptions only(bool farApart, bool longChains) {
  MinCutOptions o;
  o.banIfUsedFarApart = farApart;
  o.banIfLongFusibleChains = longChains;
  o.banIfMaterializedBackward = false;
  o.banIfNotInAllowlist = false;
  o.banIfReduction = false;
  return o;
}

}  // namespace

class TestPartitionerGraphs : public QObject {
  Q_OBJECT

 private slots:
  void classifiesCosMm() {
    const JointGraph g = cosMm(false);
    const NodeInfo info = classifyNodes(g);
    QCOMPARE(info.inputs, (std::vector<NodeId>{0, 1}));
    QCOMPARE(info.requiredFw, (std::vector<char>{1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
    QCOMPARE(info.requiredBw, (std::vector<char>{0, 0, 0, 0, 0, 1, 1, 0, 1, 0, 1, 0, 0, 1, 1}));
    QCOMPARE(info.unclaimed, (std::vector<char>{0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 1, 1, 0, 0}));
    QCOMPARE(info.fwOrder,
             (std::vector<int32_t>{0, 1, 2, 3, 4, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}));
    const int64_t far = kFarFromBackward;
    // x, w, cos feed backward-side values directly (dist 1); mm and sum only reach the loss.
    QCOMPARE(info.distFromBw,
             (std::vector<int64_t>{1, 1, 1, far, far, 0, 0, 0, 0, 0, 0, 0, 0, 0, far}));
  }

  // trunc(bytes * 1.1^max(min(dist, 100), 1)), doubled when every user fuses with the node.
  void nodeWeights() {
    const JointGraph g = cosMm(false);
    const NodeInfo info = classifyNodes(g);
    auto w = [&](const char* n) { return nodeWeight(g, info, id(g, n), true); };
    QCOMPARE(w("primals_1"), int64_t(1126));  // 1024 * 1.1 = 1126.4, a placeholder
    QCOMPARE(w("cos"), int64_t(1126));        // materialized: its user mm does not fuse
    QCOMPARE(w("mm"), int64_t(14111347));     // dist 10^9 -> 1.1^100
    QCOMPARE(w("sum_1"), int64_t(55122));     // 4 * 1.1^100
    QCOMPARE(w("t"), int64_t(1126));          // dist 0 counts as 1
    QCOMPARE(w("sin"), int64_t(2252));        // its user neg fuses: 2 x 1126
    const JointGraph p = cosMm(true);
    const NodeInfo pInfo = classifyNodes(p);
    QCOMPARE(nodeWeight(p, pInfo, 1, true), int64_t(0));  // parameters are free to save
    QCOMPARE(nodeWeight(p, pInfo, 1, false), int64_t(1126));
  }

  void banRules() {
    const JointGraph g = cosMm(false);
    const NodeInfo info = classifyNodes(g);
    MinCutOptions base, more = only(false, false);
    more.banIfNotInAllowlist = true;
    more.banIfReduction = true;
    auto ban = [&](const char* n, const MinCutOptions& o) {
      return shouldBanRecomputation(g, info, id(g, n), o);
    };
    QVERIFY(ban("cos", base));  // t(cos) feeds a backward mm: materialized in the backward
    QVERIFY(!ban("cos", more));
    QVERIFY(ban("mm", base) && ban("mm", more));
    QVERIFY(ban("sum_1", base));       // the loss goes to the output node: materialized
    QVERIFY(ban("sum_1", more));       // and a reduction: 4 * 4 < 1024
    QVERIFY(!ban("primals_1", base));  // only call_function nodes (primals are banned apart)
  }

  // Default cut: x (1126) beats sin/neg (2252); cos is banned, so cos or t(cos) must be cut:
  // a tie at 1126, and the sink-closest cut saves t(cos); w and t(w) tie too: t(w) is saved.
  void defaultCutSavesTransposes() {
    const JointGraph g = cosMm(false);
    const NodeInfo info = classifyNodes(g);
    const MinCutResult r = solveMinCut(g, info, MinCutOptions{});
    QCOMPARE(names(g, r.saved), (QStringList{"primals_1", "t", "t_1"}));
    QCOMPARE(r.cutValue, int64_t(3 * 1126));
    QCOMPARE(names(g, r.banned), (QStringList{"primals_1", "primals_2", "cos", "mm", "sum_1"}));
  }

  // With w a parameter its in->out edge weighs 0 and crosses the cut: w is saved, not t(w).
  void parametersAreFreeToSave() {
    const JointGraph g = cosMm(true);
    const MinCutResult r = solveMinCut(g, classifyNodes(g), MinCutOptions{});
    QCOMPARE(names(g, r.saved), (QStringList{"primals_1", "primals_2", "t_1"}));
    QCOMPARE(r.cutValue, int64_t(2 * 1126));
  }

  // A primal and its transpose feeding a backward mm weigh the same (1126): the transpose, nearer
  // the sink, is saved. If the transpose's user fuses (mul), it weighs 2252 and the primal wins.
  void sinkClosestTieRule() {
    for (const char* user : {"mm", "mul"}) {
      JointGraphBuilder b;
      const NodeId w = b.primal(kB);
      const NodeId loss = b.call("sum", {w}, 4);
      const NodeId g = b.call("expand", {b.tangent(4)}, kB);
      const NodeId grad = b.call(user, {g, b.call("t", {w}, kB)}, kB);
      b.output({loss}, {grad});
      const JointGraph j = b.build();
      const MinCutResult r = solveMinCut(j, classifyNodes(j), MinCutOptions{});
      const QStringList expected{QString(user) == "mm" ? "t" : "primals_1"};
      QCOMPARE(names(j, r.saved), expected);
      QCOMPARE(r.cutValue, int64_t(1126));
    }
  }

  // b = 0 saves the inputs (cos recomputed); b in (0, 1): the cut without the materialized-
  // backward ban saves x and t(w) (bytes = inputs: ratio 0 < b); b = 1: the default cut.
  void cosSavedOrRecomputed() {
    const JointGraph g = cosMm(false);
    BudgetPlanner planner(g);
    const BudgetPlan zero = planner.plan(0);
    QCOMPARE(zero.route, PlanRoute::BudgetZero);
    QCOMPARE(names(g, zero.saved), (QStringList{"primals_1", "primals_2"}));
    QCOMPARE(names(g, zero.recomputed), (QStringList{"cos"}));
    QCOMPARE(zero.savedBytes, int64_t(2048));
    QCOMPARE(zero.activationBytes, int64_t(0));
    QCOMPARE(zero.backwardFlops, int64_t(16384));  // the two backward mm
    const BudgetPlan mid = planner.plan(0.3);
    QCOMPARE(mid.route, PlanRoute::MoreAggressive);
    QCOMPARE(names(g, mid.saved), (QStringList{"primals_1", "t"}));
    QCOMPARE(names(g, mid.recomputed), (QStringList{"cos"}));
    QCOMPARE(mid.memoryRatio, 0.0);
    const BudgetPlan one = planner.plan(1);
    QCOMPARE(one.route, PlanRoute::BudgetOne);
    QCOMPARE(names(g, one.saved), (QStringList{"primals_1", "t", "t_1"}));
    QVERIFY(one.recomputed.empty());
    QCOMPARE(one.activationBytes, int64_t(1024));  // t(cos) only: t(w) and x live in inputs
    QCOMPARE(one.memoryRatio, 1.0);
  }

  // sum(cos(sin(x))): saving x (1126) covers everything, sin(x) is recomputed; the default cut
  // saves no more than the inputs, so every budget in (0, 1) keeps it.
  void sinCosChainIgnoresTheBudget() {
    JointGraphBuilder b;
    const NodeId x = b.primal(kB);
    const NodeId s = b.call("sin", {x}, kB);
    const NodeId loss = b.call("sum", {b.call("cos", {s}, kB)}, 4);
    const NodeId g = b.call("expand", {b.tangent(4)}, kB);
    const NodeId ga = b.call("mul", {g, b.call("neg", {b.call("sin", {s}, kB)}, kB)}, kB);
    const NodeId gx = b.call("mul", {ga, b.call("cos", {x}, kB)}, kB);
    b.output({loss}, {gx});
    const JointGraph j = b.build();
    const BudgetPlan plan = chooseSavedValues(j, 0.4);
    QCOMPARE(plan.route, PlanRoute::DefaultNotAbove);
    QCOMPARE(names(j, plan.saved), (QStringList{"primals_1"}));
    QCOMPARE(names(j, plan.recomputed), (QStringList{"sin"}));
    QCOMPARE(plan.activationBytes, int64_t(0));
  }

  // used-far-apart: relu(x) is used by mm (-> cos, unfusible) and by add after that cos; the
  // first unfusible use is cos (fw order 4), add (order 5) fuses with relu: banned.
  void usedFarApartBan() {
    JointGraphBuilder b;
    const NodeId x = b.primal(kB), w = b.primal(kB);
    const NodeId a = b.call("relu", {x}, kB);
    const NodeId e = b.call("cos", {b.call("mm", {a, w}, kB)}, kB);
    const NodeId loss = b.call("sum", {b.call("add", {a, e}, kB)}, 4);
    const NodeId grad = b.call("mul", {b.call("expand", {b.tangent(4)}, kB), x}, kB);
    b.output({loss}, {grad, kNoNode});
    const JointGraph g = b.build();
    const NodeInfo info = classifyNodes(g);
    QCOMPARE(names(g, solveMinCut(g, info, only(true, false)).banned),
             (QStringList{"primals_1", "primals_2", "mm", "add"}));
    QCOMPARE(names(g, solveMinCut(g, info, only(false, false)).banned),
             (QStringList{"primals_1", "primals_2", "mm"}));
  }

  // long-fusible-chains: 120 relus; from relu (fw order 1) the walk bans the node popped with an
  // empty queue more than 100 positions later: relu_101 (order 102). Later starts are visited.
  void longFusibleChainBan() {
    JointGraphBuilder b;
    const NodeId x = b.primal(kB);
    NodeId v = x;
    for (int i = 0; i < 120; ++i) v = b.call("relu", {v}, kB);
    const NodeId loss = b.call("sum", {v}, 4);
    const NodeId grad = b.call("mul", {b.call("expand", {b.tangent(4)}, kB), x}, kB);
    b.output({loss}, {grad});
    const JointGraph g = b.build();
    const NodeInfo info = classifyNodes(g);
    QCOMPARE(names(g, solveMinCut(g, info, only(false, true)).banned),
             (QStringList{"primals_1", "relu_101"}));
    QCOMPARE(names(g, solveMinCut(g, info, only(false, false)).banned), (QStringList{"primals_1"}));
  }

  // x (float16) -> _to_copy (float32) -> 8 relus -> sum; the backward needs t(relu_7). Saving
  // t(relu_7) (2048 bytes, weight 2252) beats x (weight trunc(1024 * 1.1^10) = 2655), so every
  // cut saves it (ratio 1); nothing banned is a candidate (x is an input, sum never reaches the
  // backward), so budgets in (0, 1) fall back to saving the inputs.
  void noCandidatesSavesTheInputs() {
    JointGraphBuilder b;
    const NodeId x = b.primal(kB);
    NodeId v = b.call("_to_copy", {x}, 2 * kB);
    for (int i = 0; i < 8; ++i) v = b.call("relu", {v}, 2 * kB);
    const NodeId loss = b.call("sum", {v}, 4);
    const NodeId g = b.call("expand", {b.tangent(4)}, 2 * kB);
    const NodeId m = b.call("mm", {b.call("t", {v}, 2 * kB), g}, 2 * kB);
    b.output({loss}, {b.call("_to_copy", {m}, kB)});
    const JointGraph j = b.build();
    QCOMPARE(nodeWeight(j, classifyNodes(j), 0, true), int64_t(2655));
    BudgetPlanner planner(j);
    QCOMPARE(names(j, planner.plan(1).saved), (QStringList{"t"}));
    const BudgetPlan plan = planner.plan(0.9);
    QCOMPARE(plan.route, PlanRoute::NoCandidates);
    QCOMPARE(names(j, plan.saved), (QStringList{"primals_1"}));
    QCOMPARE(plan.recomputed.size(), size_t(9));  // _to_copy and the 8 relus
  }

  // A banned tuple (inf in->out) read directly by the backward: every cut is infinite, as
  // networkx reports it.
  void infiniteCutThrows() {
    JointGraphBuilder b;
    const NodeId x = b.primal(kB);
    const NodeId attn = b.tupleCall("_scaled_dot_product_efficient_attention", {x, x, x}, kB, 1);
    const NodeId loss = b.call("sum", {b.getitem(attn, kB)}, 4);
    const NodeId g = b.call("expand", {b.tangent(4)}, kB);
    b.output({loss}, {b.call("_efficient_attention_backward", {g, attn}, kB)});
    const JointGraph j = b.build();
    try {
      solveMinCut(j, classifyNodes(j), MinCutOptions{});
      QFAIL("expected std::runtime_error");
    } catch (const std::runtime_error& e) {
      QCOMPARE(QString(e.what()), QString("Infinite capacity path, flow unbounded above."));
    }
  }

  void noBackward() {
    JointGraphBuilder b;
    const NodeId x = b.primal(kB);
    b.output({b.call("sin", {x}, kB)}, {kNoNode});
    const JointGraph g = b.build();
    const BudgetPlan plan = chooseSavedValues(g, 0.5);
    QCOMPARE(plan.route, PlanRoute::NoBackward);
    QVERIFY(plan.saved.empty());
  }
};

QTEST_GUILESS_MAIN(TestPartitionerGraphs)
#include "test_partitioner_graphs.moc"
