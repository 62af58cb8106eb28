// The compare flow in the main window, offscreen, as a user does it: File > Compare Reports… on
// two reports (read on a worker thread; `matmulviz --compare A B` calls the same), the Strategies
// view's "Compare runs" with two runs selected, runs of an earlier session (numbers only, with a
// note), and the messages for files that cannot be compared.
#include "core/report/report_json.h"
#include "core/strategies/runner.h"
#include "ui/charts/compare_diff_chart.h"
#include "ui/charts/compare_strategies_chart.h"
#include "ui/charts/compare_timeline_chart.h"
#include "ui/models/compare_memory_model.h"
#include "ui/models/compare_strategies_model.h"
#include "ui/models/run_history.h"
#include "ui/widgets/compare_controller.h"
#include "ui/widgets/compare_window.h"
#include "ui/widgets/diff_color_proxy.h"
#include "ui/widgets/file_loader.h"
#include "ui/widgets/main_window.h"
#include "ui/widgets/strategies_view.h"

#include <QtTest/QtTest>

#include <QAbstractItemModelTester>
#include <QAction>
#include <QComboBox>
#include <QElapsedTimer>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>

using namespace matmulviz;
using namespace matmulviz::ui;

namespace {

constexpr int kLoadMs = 60'000;

QByteArray reportJson(bool timeline, bool aRequiresGrad) {
  RunConfig c;
  c.workload = {48, 6, 2, 4, 3, 16, DType::Float32};
  c.repeats = 1;
  c.requiresGrad.a = aRequiresGrad;
  c.recordTimeline = timeline;
  StrategyRunner runner(c, makeRandomInputs(c.workload, 2));
  return QByteArray::fromStdString(toJson(runner.run(), TimelineInJson::Include).dump(2));
}

int rowNamed(const QAbstractItemModel& m, const QString& name) {
  for (int r = 0; r < m.rowCount(); ++r)
    if (m.data(m.index(r, 0)).toString() == name) return r;
  return -1;
}

}  // namespace

class TestCompareWindow : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QString a_, b_, plain_;
  QString write(const QString& name, const QByteArray& bytes) {
    QFile f(dir_.filePath(name));
    if (!f.open(QIODevice::WriteOnly)) return {};
    f.write(bytes);
    return f.fileName();
  }
  QString historyPath() const { return dir_.filePath("history.json"); }
  /// Compares two files and waits for the result; true when compared.
  static bool compare(MainWindow& w, const QString& a, const QString& b) {
    QSignalSpy done(w.compareController(), &CompareController::compared);
    QSignalSpy failed(w.compareController(), &CompareController::failed);
    w.compareController()->compareFiles(a, b);
    QElapsedTimer clock;
    clock.start();
    while (done.size() + failed.size() == 0 && clock.elapsed() < kLoadMs) QTest::qWait(20);
    return done.size() == 1;
  }

 private slots:
  void initTestCase() {
    QCoreApplication::setOrganizationName("matmulviz-tests");
    QCoreApplication::setApplicationName("test_compare_window");
    QSettings().clear();
    a_ = write("a.json", reportJson(true, false));
    b_ = write("b.json", reportJson(true, true));
    plain_ = write("plain.json", reportJson(false, false));
  }
  void init() { QFile::remove(historyPath()); }

  void menuAction() {
    MainWindow w(historyPath());
    auto* action = w.findChild<QAction*>("compareReportsAction");
    QVERIFY(action);
    QCOMPARE(action->shortcut(), QKeySequence("Ctrl+Shift+D"));
  }
  void twoReports() {
    MainWindow w(historyPath());
    QVERIFY(compare(w, a_, b_));
    CompareWindow* cw = w.compareController()->compareWindow();
    QVERIFY(cw && cw->isVisible());
    QVERIFY2(cw->headerText().contains("requires_grad: none -&gt; a"),
             qPrintable(cw->headerText()));
    QAbstractItemModelTester memoryTester(cw->memoryModel(),
                                          QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester strategiesTester(
        cw->strategiesModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(cw->strategiesModel()->rowCount(), 5);  // every strategy
    // strategy3 with a requiring grad keeps each batch's c[q[...]] saved for bmm's backward: its
    // peak grows.
    QVERIFY(cw->showTimeline("strategy3"));
    const CompareMemoryModel& m = *cw->memoryModel();
    QCOMPARE(m.data(m.index(0, 0)).toString(), "peak allocated");
    QVERIFY(m.data(m.index(0, CompareMemoryModel::Difference), CompareMemoryModel::RawRole)
                .toLongLong() > 0);
    QVERIFY(cw->timelineChart()->seriesNames().contains("A a.json: allocated"));
    QVERIFY(cw->timelineChart()->seriesNames().contains("B b.json: reserved"));
    QCOMPARE(cw->timelineChart()->chartName(), "compare-memory-strategy3");
    // Growth in red in the table (the view's proxy), a row that did not change uncoloured.
    const QAbstractItemModel* shown = cw->memoryTable()->model();
    QCOMPARE(shown->data(shown->index(0, CompareMemoryModel::Difference), Qt::ForegroundRole)
                 .value<QBrush>()
                 .color(),
             DiffColorProxy::growthColor());
    const int a = rowNamed(*shown, "a");
    QVERIFY(a > 1);
    QVERIFY(!shown->data(shown->index(a, 0), Qt::ForegroundRole).isValid());
    // Rows by category, then allocations over the run with their block counts.
    auto* grouping = cw->findChild<QComboBox*>("compareGrouping");
    grouping->setCurrentIndex(1);
    QVERIFY(rowNamed(m, "saved for backward") > 1);
    grouping->setCurrentIndex(2);
    QVERIFY(!cw->memoryTable()->isColumnHidden(CompareMemoryModel::Blocks));
    QCOMPARE(m.data(m.index(rowNamed(m, "a"), CompareMemoryModel::Blocks)).toString(), "1 -> 1");
    cw->showPage(CompareWindow::Page::Strategies);
    QCOMPARE(cw->strategiesChart()->pointCount("A a.json"), 5);
    QCOMPARE(cw->strategiesChart()->seriesNames(), (QStringList{"A a.json", "B b.json"}));
    cw->strategiesChart()->setLogScale(true);
    QCOMPARE(cw->strategiesChart()->pointCount("B b.json"), 5);
    int differences = 0;  // one "B − A +..." above each pair
    for (const QString& t : cw->strategiesChart()->texts()) differences += t.startsWith("B − A ");
    QCOMPARE(differences, 5);
  }
  void twoRunsOfTheHistory() {
    MainWindow w(historyPath());
    w.openFiles({a_, b_});
    QVERIFY(w.fileLoader()->wait(kLoadMs));
    QCOMPARE(w.history()->size(), 2);
    StrategiesView* view = w.strategiesView();
    auto* button = view->findChild<QPushButton*>("compareRuns");
    QVERIFY(button);
    QCOMPARE(button->shortcut(), QKeySequence("Ctrl+D"));
    QVERIFY(!button->isEnabled());
    QTableView* table = view->tableView();
    table->selectRow(0);  // run 1
    QVERIFY(!button->isEnabled());
    table->selectionModel()->select(table->model()->index(table->model()->rowCount() - 1, 0),
                                    QItemSelectionModel::Select | QItemSelectionModel::Rows);
    QCOMPARE(view->selectedRunIds(), (QVector<int>{1, 2}));
    QVERIFY(button->isEnabled());
    QSignalSpy done(w.compareController(), &CompareController::compared);
    button->click();
    QCOMPARE(done.size(), 1);
    CompareWindow* cw = w.compareController()->compareWindow();
    // Opened here, so their reports are kept: the timelines compare.
    QVERIFY(!cw->comparison()->comparison.timelines.empty());
    QCOMPARE(cw->comparison()->nameA, "run #1 (a.json)");
  }
  void runsOfAnEarlierSession() {
    {
      MainWindow w(historyPath());
      w.openFiles({a_, b_});
      QVERIFY(w.fileLoader()->wait(kLoadMs));
    }  // saves the history
    MainWindow w(historyPath());
    QCOMPARE(w.history()->size(), 2);
    QSignalSpy done(w.compareController(), &CompareController::compared);
    w.compareController()->compareRuns(1, 2);
    QCOMPARE(done.size(), 1);
    CompareWindow* cw = w.compareController()->compareWindow();
    QCOMPARE(cw->strategiesModel()->rowCount(), 5);
    QVERIFY(cw->comparison()->comparison.timelines.empty());
    auto* message = cw->findChild<QLabel*>("compareNoTimeline");
    QVERIFY2(message->text().contains("earlier session"), qPrintable(message->text()));
  }
  void notComparable_data() {
    QTest::addColumn<QString>("b");
    QTest::addColumn<QString>("message");
    QTest::newRow("damaged") << "damaged.json"
                             << "'damaged.json':";
    QTest::newRow("python run beside a report without a timeline")
        << QStringLiteral(MATMULVIZ_REPORT_DIR "/python_small_run.json")
        << "nothing to compare between 'plain.json' and 'python_small_run.json'";
    QTest::newRow("a preset") << "preset.json"
                              << "'preset.json' is not a report";
  }
  void notComparable() {
    QFETCH(QString, b);
    QFETCH(QString, message);
    write("damaged.json", "{\"format\": \"matmulviz-report\", \"version\": 1, \"ki");
    write("preset.json", "{\"name\": \"mine\", \"n\": 64}");
    if (!b.contains('/')) b = dir_.filePath(b);
    MainWindow w(historyPath());
    QSignalSpy failed(w.compareController(), &CompareController::failed);
    QVERIFY(!compare(w, plain_, b));
    QVERIFY2(failed.at(0).at(0).toString().contains(message),
             qPrintable(failed.at(0).at(0).toString()));
    auto* box = w.findChild<QMessageBox*>("compareErrorBox");
    QVERIFY(box);
    QVERIFY(box->text().contains(message));
    QVERIFY(!w.compareController()->compareWindow());
  }
  void reportWithoutATimeline() {
    MainWindow w(historyPath());
    QVERIFY(compare(w, a_, plain_));
    CompareWindow* cw = w.compareController()->compareWindow();
    QVERIFY2(cw->headerText().contains("&#x27;plain.json&#x27; has no memory timeline") ||
                 cw->headerText().contains("'plain.json' has no memory timeline"),
             qPrintable(cw->headerText()));
    QVERIFY(cw->headerText().contains("--timeline"));
    QCOMPARE(cw->strategiesModel()->rowCount(), 5);
  }
};

QTEST_MAIN(TestCompareWindow)
#include "test_compare_window.moc"
