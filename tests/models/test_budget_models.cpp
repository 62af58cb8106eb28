// The Budget view's models, GUI-free: the explorer plans the example graphs, the nodes,
// frontier and timeline models pass QAbstractItemModelTester while the budget moves, the
// timeline is consistent with the plan, the layered layout never overlaps two nodes, and
// dominated plans are told from the frontier's.

#include "ui/models/budget_explorer.h"
#include "ui/models/budget_frontier_model.h"
#include "ui/models/budget_graph_layout.h"
#include "ui/models/budget_nodes_model.h"
#include "ui/models/budget_timeline_model.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QtTest/QtTest>

#include <algorithm>
#include <cmath>

using namespace matmulviz;
using namespace matmulviz::ui;
using partitioner::NodeId;
using partitioner::PlanRoute;

namespace {

FrontierPoint plan(int64_t bytes, int64_t flops) {
  FrontierPoint p;
  p.activationBytes = bytes;
  p.recomputeFlops = flops;
  return p;
}

void addExamples() {
  QTest::addColumn<QString>("example");
  for (const BudgetExample& e : budgetExamples()) QTest::newRow(qPrintable(e.key)) << e.key;
}

}  // namespace

class TestBudgetModels : public QObject {
  Q_OBJECT
 private slots:
  void examplesExist() {
    QCOMPARE(budgetExamples().size(), 3);
    for (const BudgetExample& e : budgetExamples()) QVERIFY(makeBudgetExample(e.key) != nullptr);
    QVERIFY(makeBudgetExample("no such graph") == nullptr);
  }

  void modelsPassTheTesterWhileTheBudgetMoves_data() { addExamples(); }
  void modelsPassTheTesterWhileTheBudgetMoves() {
    QFETCH(QString, example);
    BudgetExplorer explorer;
    BudgetNodesModel nodes;
    BudgetFrontierModel frontier;
    BudgetTimelineModel timeline;
    QAbstractItemModelTester t1(&nodes, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester t2(&frontier, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester t3(&timeline, QAbstractItemModelTester::FailureReportingMode::QtTest);
    nodes.setExplorer(&explorer);
    frontier.setExplorer(&explorer);
    timeline.setExplorer(&explorer);
    QCOMPARE(nodes.rowCount(), 0);
    explorer.setGraph(makeBudgetExample(example), example);
    QVERIFY(nodes.rowCount() > 5);
    QVERIFY(frontier.rowCount() >= 2);
    QVERIFY(timeline.rowCount() > nodes.rowCount() / 2);
    QSignalSpy changed(&nodes, &QAbstractItemModel::dataChanged);
    for (double b : {0.0, 0.1, 0.3, 0.5, 0.8, 1.0}) {
      explorer.setBudget(b);
      QCOMPARE(frontier.data(frontier.index(frontier.currentRow(), BudgetFrontierModel::Current))
                   .toString(),
               QString("current"));
      QVERIFY(!nodes.toolTip(0).isEmpty());
      QVERIFY(!frontier.toolTip(0).isEmpty());
      QVERIFY(timeline.toolTip(0).contains("alive after it"));
    }
    QVERIFY(changed.count() >= 5);
    explorer.setSolver(partitioner::KnapsackSolver::Greedy);
    QVERIFY(frontier.rowCount() >= 2);
    nodes.setExplorer(nullptr);
    QCOMPARE(nodes.rowCount(), 0);
  }

  // Budget 0 keeps only the inputs: no activation memory, every forward op the backward needs
  // is recomputed; budget 1 is the default plan. The summary says it in words.
  void budgetZeroAndOne() {
    BudgetExplorer explorer;
    explorer.setGraph(makeBudgetExample("mm-cos-chain"), "chain");
    explorer.setBudget(0);
    QCOMPARE(explorer.plan().route, PlanRoute::BudgetZero);
    QCOMPARE(explorer.plan().activationBytes, 0);
    QVERIFY(explorer.plan().recomputeFlops > 0);
    QVERIFY2(explorer.summary().contains("keeps only the inputs"), qPrintable(explorer.summary()));
    explorer.setBudget(1);
    QCOMPARE(explorer.plan().route, PlanRoute::BudgetOne);
    QVERIFY(explorer.plan().activationBytes > 0);
    QVERIFY(explorer.summary().contains("PyTorch's default"));
    const auto& f = explorer.frontier();
    QCOMPARE(f.front().budgetLo, 0.0);
    QCOMPARE(f.back().budgetHi, 1.0);
    // Each distinct plan once; together they cover every swept budget.
    int covered = 0;
    for (const FrontierPoint& p : f)
      covered += int(std::lround((p.budgetHi - p.budgetLo) * BudgetExplorer::sweepSteps())) + 1;
    QVERIFY(covered >= BudgetExplorer::sweepSteps() + 1);
  }

  // The roles follow the plan: saved nodes are savedUsed, recomputed ones plan.recomputed;
  // inputs and parameters are told apart.
  void rolesFollowThePlan() {
    BudgetExplorer explorer;
    explorer.setGraph(makeBudgetExample("mm-cos-chain-parameters"), "chain");
    explorer.setBudget(0.3);
    BudgetNodesModel nodes;
    nodes.setExplorer(&explorer);
    int inputs = 0, parameters = 0, saved = 0, recomputed = 0;
    for (int r = 0; r < nodes.rowCount(); ++r) {
      const NodeRole role = nodes.roleAt(r);
      QCOMPARE(
          nodes.data(nodes.index(r, BudgetNodesModel::Role), BudgetNodesModel::RawRole).toInt(),
          int(role));
      inputs += role == NodeRole::Input;
      parameters += role == NodeRole::Parameter;
      saved += role == NodeRole::Saved || role == NodeRole::SavedView;
      if (role == NodeRole::SavedView)  // a transpose of a weight: no memory of its own
        QCOMPARE(explorer.graph()->node(nodes.nodeAt(r)).op, std::string("t"));
      recomputed += role == NodeRole::Recomputed;
    }
    QCOMPARE(inputs, 1);
    QCOMPARE(parameters, 5);
    int savedNonInput = 0;
    for (NodeId s : explorer.plan().savedUsed)
      savedNonInput += explorer.graph()->node(s).kind != partitioner::NodeKind::Primal;
    QCOMPARE(saved, savedNonInput);
    QCOMPARE(recomputed, int(explorer.plan().recomputed.size()));
  }

  // The derived timeline: saved bytes at the end of the forward are the plan's activation
  // memory (the chain has no views of inputs among them); budget 0 recomputes in the backward,
  // budget 1 saves more and recomputes less.
  void timelineFollowsThePlan() {
    BudgetExplorer explorer;
    BudgetTimelineModel timeline;
    timeline.setExplorer(&explorer);
    explorer.setGraph(makeBudgetExample("mm-cos-chain"), "chain");
    auto sum = [&](BudgetTimelineModel::Band b) {
      qint64 s = 0;
      for (qint64 v : timeline.bandSeries(b)) s += v;
      return s;
    };
    explorer.setBudget(0);
    QCOMPARE(sum(BudgetTimelineModel::SavedBand), 0);
    const qint64 recomputedAtZero = sum(BudgetTimelineModel::RecomputedBand);
    QVERIFY(recomputedAtZero > 0);
    explorer.setBudget(1);
    const int endOfForward = timeline.forwardSteps() - 1;
    QCOMPARE(timeline.bandSeries(BudgetTimelineModel::SavedBand)[endOfForward],
             explorer.plan().activationBytes);
    QVERIFY(sum(BudgetTimelineModel::RecomputedBand) < recomputedAtZero);
    QVERIFY(timeline.peakStep() >= 0);
    QCOMPARE(timeline.data(timeline.index(0, BudgetTimelineModel::Phase)).toString(),
             QString("forward"));
    QCOMPARE(timeline.data(timeline.index(timeline.rowCount() - 1, BudgetTimelineModel::Phase))
                 .toString(),
             QString("backward"));
  }

  // The layout: every drawn node placed once, edges left to right, nodes of one layer at least
  // a row apart (so boxes under one unit never overlap), waypoints strictly between.
  void layoutHasNoOverlaps_data() { addExamples(); }
  void layoutHasNoOverlaps() {
    QFETCH(QString, example);
    BudgetExplorer explorer;
    explorer.setGraph(makeBudgetExample(example), example);
    const GraphLayout layout = layoutGraph(*explorer.graph(), explorer.forwardNodes());
    QCOMPARE(layout.places.size(), explorer.forwardNodes().size());
    QVERIFY(layout.layers >= 3);
    for (int i = 0; i < layout.places.size(); ++i)
      for (int j = i + 1; j < layout.places.size(); ++j) {
        const auto &a = layout.places[i], &b = layout.places[j];
        if (a.layer == b.layer)
          QVERIFY2(std::abs(a.y - b.y) >= 1 - 1e-9,
                   qPrintable(QString("%1 and %2 overlap").arg(a.node).arg(b.node)));
      }
    QVERIFY(!layout.edges.isEmpty());
    for (const GraphLayout::Edge& e : layout.edges) {
      const int from = layout.places[e.from].layer, to = layout.places[e.to].layer;
      QVERIFY(from < to);
      QCOMPARE(e.via.size(), to - from - 1);
      for (int k = 0; k < e.via.size(); ++k) QCOMPARE(int(e.via[k].x()), from + 1 + k);
    }
    for (const auto& p : layout.places) QVERIFY(p.y >= 0 && p.y < layout.height);
  }

  // A weight sits one layer before its matmul, not in the first column.
  void weightsStandBesideTheirMatmul() {
    BudgetExplorer explorer;
    explorer.setGraph(makeBudgetExample("mm-cos-chain"), "chain");
    const partitioner::JointGraph& g = *explorer.graph();
    const GraphLayout layout = layoutGraph(g, explorer.forwardNodes());
    const auto w5 = g.find("primals_6"), mm5 = g.find("mm_4");
    QVERIFY(w5 && mm5);
    QCOMPARE(layout.places[layout.indexOf(*w5)].layer + 1,
             layout.places[layout.indexOf(*mm5)].layer);
  }

  // Pareto dominance over (activation bytes, extra FLOPs), both minimised: a plan is dominated
  // when another is no worse in both and better in one; equal plans do not dominate each other.
  void dominance_data() {
    QTest::addColumn<QVector<FrontierPoint>>("points");
    QTest::addColumn<QVector<int>>("dominatedBy");
    QTest::newRow("a frontier") << QVector<FrontierPoint>{plan(0, 90), plan(10, 40), plan(20, 0)}
                                << QVector<int>{-1, -1, -1};
    QTest::newRow("more memory, same FLOPs")
        << QVector<FrontierPoint>{plan(0, 90), plan(10, 40), plan(15, 40), plan(20, 0)}
        << QVector<int>{-1, -1, 1, -1};
    QTest::newRow("more of both") << QVector<FrontierPoint>{plan(0, 90), plan(30, 50), plan(20, 0)}
                                  << QVector<int>{-1, 2, -1};
    QTest::newRow("same memory, more FLOPs")
        << QVector<FrontierPoint>{plan(7, 90), plan(7, 60)} << QVector<int>{1, -1};
    QTest::newRow("equal plans") << QVector<FrontierPoint>{plan(5, 5), plan(5, 5)}
                                 << QVector<int>{-1, -1};
    QTest::newRow("one plan") << QVector<FrontierPoint>{plan(5, 5)} << QVector<int>{-1};
  }
  void dominance() {
    QFETCH(QVector<FrontierPoint>, points);
    QFETCH(QVector<int>, dominatedBy);
    for (int i = 0; i < points.size(); ++i) QCOMPARE(dominatingPlan(points, i), dominatedBy[i]);
    QCOMPARE(dominatingPlan(points, -1), -1);
    QCOMPARE(dominatingPlan(points, int(points.size())), -1);
  }

  // The model's Dominated column and tooltip agree with dominatingPlan on every example's sweep.
  void modelNamesDominatedPlans_data() { addExamples(); }
  void modelNamesDominatedPlans() {
    QFETCH(QString, example);
    BudgetExplorer explorer;
    explorer.setGraph(makeBudgetExample(example), example);
    BudgetFrontierModel frontier;
    frontier.setExplorer(&explorer);
    QVERIFY(frontier.rowCount() >= 2);
    int onFrontier = 0;
    for (int r = 0; r < frontier.rowCount(); ++r) {
      const int by = dominatingPlan(explorer.frontier(), r);
      const QModelIndex cell = frontier.index(r, BudgetFrontierModel::Dominated);
      QCOMPARE(frontier.data(cell, BudgetFrontierModel::RawRole).toBool(), by >= 0);
      QCOMPARE(frontier.toolTip(r).contains("Not on the frontier"), by >= 0);
      if (by >= 0) {
        QCOMPARE(frontier.data(cell).toString(), "by " + budgetRangeText(frontier.point(by)));
      } else {
        QVERIFY(frontier.data(cell).toString().isEmpty());
        ++onFrontier;
      }
    }
    QVERIFY(onFrontier >= 1);
  }
};

QTEST_GUILESS_MAIN(TestBudgetModels)
#include "test_budget_models.moc"
