// The knapsack solvers of PyTorch's activation memory budget (knapsack.py's dp_knapsack and
// greedy_knapsack): ties, float32 absorption, zero-size items, round-half-to-even quantisation,
// the greedy walk; the joint graph builder's checks; the op classes.

#include "core/partitioner/joint_graph.h"
#include "core/partitioner/knapsack.h"
#include "core/partitioner/op_types.h"

#include <QtTest/QtTest>

#include <stdexcept>
#include <vector>

using namespace matmulviz::partitioner;

namespace {

QList<int> list(const std::vector<int>& v) {
  return QList<int>(v.begin(), v.end());
}

}  // namespace

class TestPartitionerKnapsack : public QObject {
  Q_OBJECT

 private slots:
  // Sizes 3000, 5000, 2000 quanta, capacity 5000: {1} and {0, 2} both reach 5. The backtrack
  // from the last item finds row 3 equal to row 2, so the later item 2 is dropped, item 1 kept.
  void dpTieDropsTheLaterItem() {
    const std::vector<double> memory{0.3, 0.5, 0.2}, runtime{3, 5, 2};
    const KnapsackResult r = dpKnapsack(memory, runtime, 0.5);
    QCOMPARE(r.runtime, 5.0);
    QCOMPARE(list(r.saved), (QList<int>{1}));
    QCOMPARE(list(r.recompute), (QList<int>{2, 0}));  // descending, as the backtrack visits them
  }

  // Equal items: the first ones in candidate order are kept.
  void dpEqualItemsKeepTheFirst() {
    const std::vector<double> memory(5, 0.1), runtime(5, 7);
    const KnapsackResult r = dpKnapsack(memory, runtime, 0.25);  // Q = 2500, two fit
    QCOMPARE(list(r.saved), (QList<int>{0, 1}));
    QCOMPARE(list(r.recompute), (QList<int>{4, 3, 2}));
    QCOMPARE(r.runtime, 14.0);
  }

  // 2^24 + 1 rounds to 2^24 in float32 (ties to even): the runtime-1 item changes nothing in the
  // table and is marked "recompute" although it fits.
  void dpFloat32Absorption() {
    const std::vector<double> memory{0.1, 0.1}, runtime{16777216.0, 1.0};
    const KnapsackResult r = dpKnapsack(memory, runtime, 1.0);
    QCOMPARE(list(r.saved), (QList<int>{0}));
    QCOMPARE(list(r.recompute), (QList<int>{1}));
    QCOMPARE(r.runtime, 16777216.0);
    // Below 2^24 the same item is kept.
    const std::vector<double> small{1000.0, 1.0};
    QCOMPARE(list(dpKnapsack(memory, small, 1.0).saved), (QList<int>{0, 1}));
  }

  // Runtimes enter the table as float32: 16777217 becomes 16777216.
  void dpRuntimesAreFloat32() {
    const std::vector<double> memory{0.1}, runtime{16777217.0};
    QCOMPARE(dpKnapsack(memory, runtime, 1.0).runtime, 16777216.0);
  }

  // A zero-size item adds its runtime to every column: always kept, even at capacity 0; the
  // 2000-quanta item does not fit in Q = 1000.
  void dpZeroSizeItems() {
    const std::vector<double> memory{0.0, 0.2}, runtime{1, 4};
    const KnapsackResult r = dpKnapsack(memory, runtime, 0.1);
    QCOMPARE(list(r.saved), (QList<int>{0}));
    QCOMPARE(list(r.recompute), (QList<int>{1}));
    QCOMPARE(r.runtime, 1.0);
    const std::vector<double> zero{0.0}, five{5};
    QCOMPARE(list(dpKnapsack(zero, five, 0.0).saved), (QList<int>{0}));
  }

  // Python's round: 2.5e-4 * 10000 = 2.5 exactly rounds to 2 (fits Q = 2); 3.5 rounds to 4.
  void dpRoundsHalfToEven() {
    const std::vector<double> one{1};
    QCOMPARE(list(dpKnapsack(std::vector<double>{0.00025}, one, 0.0002).saved), (QList<int>{0}));
    QCOMPARE(list(dpKnapsack(std::vector<double>{0.00035}, one, 0.0003).saved), (QList<int>{}));
    // The capacity rounds the same way: 0.00025 -> Q = 2 does not hold 3 quanta.
    QCOMPARE(list(dpKnapsack(std::vector<double>{0.0003}, one, 0.00025).saved), (QList<int>{}));
  }

  void dpNoItems() {
    const KnapsackResult r = dpKnapsack({}, {}, 0.5);
    QVERIFY(r.saved.empty() && r.recompute.empty());
    QCOMPARE(r.runtime, 0.0);
  }

  void dpRejectsBadInput() {
    const std::vector<double> two{0.1, 0.2}, one{1};
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, dpKnapsack(two, one, 0.5));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, dpKnapsack(one, one, -0.5));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             dpKnapsack(std::vector<double>{-0.1}, one, 0.5));
  }

  // Ratios 20, 20, 24: walk order 2, 0, 1 (stable among equals). 2 fits (0.25), 0 does not
  // (0.75 > 0.5), 1 fits (0.5 <= 0.5): the walk goes on after a miss.
  void greedyOrderAndWalk() {
    const std::vector<double> memory{0.5, 0.25, 0.25}, runtime{10, 5, 6};
    const KnapsackResult r = greedyKnapsack(memory, runtime, 0.5);
    QCOMPARE(list(r.saved), (QList<int>{2, 1}));
    QCOMPARE(list(r.recompute), (QList<int>{0}));
    QCOMPARE(r.runtime, 11.0);
  }

  // Greedy takes the best ratio first (7/0.6) and then nothing fits: runtime 7. The dp keeps
  // items 1 and 2 (runtime 10).
  void greedyIsNotOptimal() {
    const std::vector<double> memory{0.6, 0.5, 0.5}, runtime{7, 5, 5};
    const KnapsackResult g = greedyKnapsack(memory, runtime, 1.0);
    QCOMPARE(list(g.saved), (QList<int>{0}));
    QCOMPARE(list(g.recompute), (QList<int>{1, 2}));
    QCOMPARE(g.runtime, 7.0);
    const KnapsackResult d = dpKnapsack(memory, runtime, 1.0);
    QCOMPARE(list(d.saved), (QList<int>{1, 2}));
    QCOMPARE(d.runtime, 10.0);
  }

  void greedyZeroMemoryDividesByZero() {
    const std::vector<double> memory{0.1, 0.0}, runtime{1, 1};
    try {
      greedyKnapsack(memory, runtime, 1.0);
      QFAIL("expected std::domain_error");
    } catch (const std::domain_error& e) {
      QCOMPARE(QString(e.what()), QString("float division by zero"));
    }
  }

  void builderNamesUsersAndStorages() {
    JointGraphBuilder b;
    const NodeId x = b.primal(64);
    const NodeId w = b.primal(64, true);
    const NodeId m = b.call("mm", {x, w}, 64);
    const NodeId m2 = b.call("mm", {m, m}, 64);  // uses m twice: one user entry
    const NodeId t = b.call("t", {w}, 64);
    b.output({m2}, {kNoNode, t});
    const JointGraph g = b.build();
    QCOMPARE(QString::fromStdString(g.node(m2).name), QString("mm_1"));
    QCOMPARE(QString::fromStdString(g.node(w).name), QString("primals_2"));
    QCOMPARE(g.node(m).users, (std::vector<NodeId>{m2}));
    QCOMPARE(g.node(w).users, (std::vector<NodeId>{m, t}));
    QCOMPARE(g.node(m2).users, (std::vector<NodeId>{g.outputNode()}));
    QVERIFY(g.node(t).storage == g.node(w).storage);  // a view shares its base's storage
    QVERIFY(g.node(m).storage != g.node(w).storage);
    QVERIFY(g.node(w).staticParameter);
    QCOMPARE(g.gradOutputs().size(), size_t(2));
    QCOMPARE(g.gradOutputs()[0], kNoNode);
    QCOMPARE(g.find("mm_1"), std::optional<NodeId>(m2));
  }

  void builderRejectsBadGraphs() {
    JointGraphBuilder b;
    const NodeId x = b.primal(4);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, b.call("sin", {x + 1}, 4));
    QVERIFY_THROWS_EXCEPTION(std::logic_error, b.build());
    CallOptions named;
    named.name = "primals_1";
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, b.call("sin", {x}, 4, named));
    b.output({x}, {});
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, b.call("sin", {x}, 4));
  }

  void opClasses() {
    QVERIFY(isRecomputableOp("cos") && isRecomputableOp("getitem") && isRecomputableOp("t"));
    QVERIFY(!isRecomputableOp("mm") && !isRecomputableOp("_softmax") && !isRecomputableOp("cat"));
    QVERIFY(isViewOp("permute") && isViewOp("split") && !isViewOp("reshape"));
    QVERIFY(isComputeIntensiveOp("_scaled_dot_product_efficient_attention"));
    QVERIFY(!isComputeIntensiveOp("_scaled_dot_product_cudnn_attention"));
    QVERIFY(isRandomOp("native_dropout") && isFusibleOp("native_dropout"));
    JointGraphBuilder b;
    const NodeId x = b.primal(4);
    const NodeId c = b.call("cos", {x}, 4);
    const NodeId m = b.call("mm", {c, c}, 4);
    CallOptions list;
    list.nestedArgs = {m};
    const NodeId cat = b.call("cat", {}, 4, list);
    b.output({cat}, {});
    const JointGraph g = b.build();
    QVERIFY(isFusible(g.node(m), g.node(cat)));  // anything fuses into a cat
    QVERIFY(!isFusible(g.node(c), g.node(m)));
    QVERIFY(!isFusible(g.node(x), g.node(c)));  // a placeholder is no fusible op
    QVERIFY(!isRecomputable(g.node(x)));
  }
};

QTEST_GUILESS_MAIN(TestPartitionerKnapsack)
#include "test_partitioner_knapsack.moc"
