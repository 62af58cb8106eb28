// The Budget view offscreen, as a user drives it: the slider and the spin box re-plan, the
// graph's colours, the summary, the frontier's current point and the timeline follow; clicking
// a frontier point chooses its plan; dominated plans are drawn apart from the frontier; the
// solver can change; node boxes never overlap each other nor the size labels, in the view and at
// the export size, for every example graph.

#include "ui/charts/budget_frontier_chart.h"
#include "ui/charts/budget_graph_chart.h"
#include "ui/charts/budget_timeline_chart.h"
#include "ui/models/budget_explorer.h"
#include "ui/models/budget_frontier_model.h"
#include "ui/models/budget_nodes_model.h"
#include "ui/models/budget_timeline_model.h"
#include "ui/widgets/budget_view.h"

#include <qcustomplot.h>

#include <QApplication>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QSlider>
#include <QtTest/QtTest>
#include <algorithm>

using namespace matmulviz;
using namespace matmulviz::ui;

namespace {

QStringList overlaps(const QVector<QRectF>& boxes, const QVector<QRectF>& labels) {
  QStringList out;
  for (int i = 0; i < boxes.size(); ++i) {
    for (int j = i + 1; j < boxes.size(); ++j)
      if (boxes[i].intersects(boxes[j])) out << QString("boxes %1 and %2").arg(i).arg(j);
    for (int j = 0; j < labels.size(); ++j)
      if (boxes[i].intersects(labels[j])) out << QString("box %1 and label %2").arg(i).arg(j);
  }
  return out;
}

void savePng(QWidget& w, const QString& name) {
  const QString dir = qEnvironmentVariable("MATMULVIZ_CHART_PNG_DIR");
  if (dir.isEmpty()) return;
  for (ChartView* c : w.findChildren<ChartView*>()) c->replotNow();
  QVERIFY(w.grab().save(dir + "/" + name + ".png"));
}

}  // namespace

class TestBudgetView : public QObject {
  Q_OBJECT
 private slots:
  void sliderReplans() {
    BudgetView view;
    view.resize(1250, 860);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    // Beside the scenario panel on a 1600-pixel screen, in both modes.
    QVERIFY2(view.minimumSizeHint().width() <= 1150,
             qPrintable(QString::number(view.minimumSizeHint().width())));
    view.setPresentationMode(true);
    QVERIFY(view.minimumSizeHint().width() <= 1250);
    view.setPresentationMode(false);
    auto* slider = view.findChild<QSlider*>("budgetSlider");
    auto* spin = view.findChild<QDoubleSpinBox*>("budgetSpin");
    QVERIFY(slider && spin);
    slider->setValue(0);
    QCOMPARE(view.budget(), 0.0);
    QCOMPARE(spin->value(), 0.0);
    const QString summaryAtZero = view.summary();
    QVERIFY2(summaryAtZero.contains("keeps only the inputs"), qPrintable(summaryAtZero));
    QVector<QColor> fillsAtZero;
    for (int r = 0; r < view.nodesModel()->rowCount(); ++r)
      fillsAtZero << view.graphChart()->nodeFill(r);
    const QVector<qint64> timelineAtZero = view.timelineModel()->totalSeries();
    const int currentAtZero = view.frontierModel()->currentRow();
    savePng(view, "budget-view-0");
    slider->setValue(100);
    QCOMPARE(view.budget(), 1.0);
    QCOMPARE(spin->value(), 1.0);
    QVERIFY(view.summary() != summaryAtZero);
    int changed = 0;
    for (int r = 0; r < view.nodesModel()->rowCount(); ++r)
      changed += view.graphChart()->nodeFill(r) != fillsAtZero[r];
    QVERIFY2(changed > 0, "no node changed colour between budgets 0 and 1");
    QVERIFY(view.timelineModel()->totalSeries() != timelineAtZero);
    QVERIFY(view.frontierModel()->currentRow() != currentAtZero);
    QVERIFY(view.graphChart()->texts().join(" ").contains("at budget 1.00"));
    spin->setValue(0.3);
    QCOMPARE(slider->value(), 30);
    QCOMPARE(view.explorer()->plan().budget, 0.3);
    savePng(view, "budget-view-030");
  }

  void clickingAFrontierPointChoosesItsPlan() {
    BudgetView view;
    view.resize(1250, 860);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.setBudget(1);
    BudgetFrontierChart* chart = view.frontierChart();
    chart->replotNow();
    const int target = 0;  // budget 0's plan
    QVERIFY(view.frontierModel()->currentRow() != target);
    auto* plot = chart->findChild<QCustomPlot*>();
    QVERIFY(plot);
    const QPoint at = chart->pointPixel(target).toPoint();
    QCOMPARE(chart->rowAt(at), target);
    QTest::mouseClick(plot, Qt::LeftButton, {}, at);
    QCOMPARE(view.budget(), view.frontierModel()->point(target).budgetLo);
    QCOMPARE(view.frontierModel()->currentRow(), target);
    QVERIFY(!chart->hoverText(at).isEmpty());
  }

  // The chain's budget-1 plan keeps 10 MiB and recomputes nothing, budget 0.5's keeps 5 MiB and
  // recomputes nothing either: the first is dominated. Dominated plans are their own hollow
  // series, named in the legend, left out of the frontier's line, and their tooltip and CSV row
  // say so; every other plan is a disc on the line.
  void dominatedPlansStandApart() {
    BudgetView view;
    view.resize(1250, 860);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.setGraph(makeBudgetExample("mm-cos-chain"), "chain");
    BudgetFrontierChart* chart = view.frontierChart();
    chart->replotNow();
    const BudgetFrontierModel* model = view.frontierModel();
    int dominated = 0;
    for (int r = 0; r < model->rowCount(); ++r) dominated += model->isDominated(r);
    const int onFrontier = model->rowCount() - dominated;
    QVERIFY(dominated >= 1 && onFrontier >= 2);
    const int last = model->rowCount() - 1;  // budget 1
    QVERIFY(model->isDominated(last));
    QCOMPARE(model->point(last).budgetHi, 1.0);
    const QStringList series = chart->seriesNames();
    const auto dominatedSeries = std::find_if(series.begin(), series.end(), [](const QString& s) {
      return s.startsWith("dominated plans");
    });
    QVERIFY2(dominatedSeries != series.end(), qPrintable(series.join(" | ")));
    QCOMPARE(chart->pointCount(*dominatedSeries), dominated);
    QCOMPARE(chart->pointCount("plans on the frontier"), onFrontier);
    QCOMPARE(chart->pointCount("frontier"), onFrontier);  // the dashed line
    const QPoint at = chart->pointPixel(last).toPoint();
    QCOMPARE(chart->rowAt(at), last);
    QVERIFY2(chart->hoverText(at).contains("Not on the frontier: budget"),
             qPrintable(chart->hoverText(at)));
    const QStringList rows = chart->csv().split('\n', Qt::SkipEmptyParts);
    QVERIFY(rows.first().endsWith(",dominated,current"));
    QCOMPARE(rows.size(), model->rowCount() + 1);
    int dominatedRows = 0;
    for (const QString& row : rows.mid(1)) dominatedRows += row.section(',', -2, -2) == "1";
    QCOMPARE(dominatedRows, dominated);
    view.setBudget(1);
    savePng(view, "budget-view-dominated");
  }

  void solverChoice() {
    BudgetView view;
    auto* solver = view.findChild<QComboBox*>("budgetSolver");
    QVERIFY(solver);
    QCOMPARE(solver->count(), 2);
    solver->setCurrentIndex(1);
    emit solver->activated(1);
    QCOMPARE(view.explorer()->solver(), partitioner::KnapsackSolver::Greedy);
    QVERIFY(view.frontierModel()->rowCount() >= 2);
  }

  // Classroom mode: larger fonts, wider columns, still no box over another or over a label.
  void presentationModeKeepsBoxesApart() {
    BudgetView view;
    view.resize(1280, 680);  // a projector, full screen, the scenario panel hidden
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    const double wideBefore = view.graphChart()->preferredExportSize().width();
    view.setPresentationMode(true);
    QVERIFY(view.graphChart()->presentationMode());
    QVERIFY(view.graphChart()->preferredExportSize().width() > wideBefore);
    view.graphChart()->replotNow();
    const QStringList bad =
        overlaps(view.graphChart()->nodeRects(), view.graphChart()->labelRects());
    QVERIFY2(bad.isEmpty(), qPrintable(bad.join(", ")));
    savePng(view, "budget-view-presentation");
  }

  void noOverlaps_data() {
    QTest::addColumn<QString>("example");
    for (const BudgetExample& e : budgetExamples()) QTest::newRow(qPrintable(e.key)) << e.key;
  }
  void noOverlaps() {
    QFETCH(QString, example);
    BudgetView view;
    view.resize(1250, 860);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QVERIFY(view.selectExample(example));
    view.setBudget(0.5);
    BudgetGraphChart* chart = view.graphChart();
    chart->replotNow();
    QCOMPARE(chart->nodeRects().size(), view.nodesModel()->rowCount());
    QStringList bad = overlaps(chart->nodeRects(), chart->labelRects());
    QVERIFY2(bad.isEmpty(), qPrintable(bad.join(", ")));
    const QRectF first = chart->nodeRects().front();
    QVERIFY(chart->hoverText(first.center().toPoint()).contains("FLOP"));
    savePng(view, "budget-view-" + example);
    // At the export size the whole graph is shown, still without overlaps.
    BudgetGraphChart alone;
    alone.setModel(view.nodesModel());
    alone.fitTo(chart->preferredExportSize());
    alone.show();
    QVERIFY(QTest::qWaitForWindowExposed(&alone));
    alone.replotNow();
    bad = overlaps(alone.nodeRects(), alone.labelRects());
    QVERIFY2(bad.isEmpty(), qPrintable(bad.join(", ")));
    const QString dir = qEnvironmentVariable("MATMULVIZ_CHART_PNG_DIR");
    if (!dir.isEmpty())
      QVERIFY(alone.exportTo(dir + "/budget-graph-" + example + ".png", alone.size()));
  }
};

int main(int argc, char** argv) {
  if (!qEnvironmentVariableIsSet("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  TestBudgetView t;
  return QTest::qExec(&t, argc, argv);
}

#include "test_budget_view.moc"
