// The main window offscreen, as a user drives it: the four views open, a small scenario runs on
// the worker thread and fills the Strategies, Memory and Gradients views, failures show in the
// window and the history, Cancel stops a run, bad input is refused, shortcuts and classroom
// mode work, and the history and scenario survive a restart.

#include "kernels/cuda/cuda_probe.h"
#include "ui/charts/heatmap_chart.h"
#include "ui/charts/ladder_chart.h"
#include "ui/charts/memory_timeline_chart.h"
#include "ui/charts/strategies_chart.h"
#include "ui/models/kernel_launch_model.h"
#include "ui/models/memory_timeline_model.h"
#include "ui/models/run_history.h"
#include "ui/models/strategies_table_model.h"
#include "ui/models/tensor_grid_model.h"
#include "ui/widgets/budget_view.h"
#include "ui/widgets/gradients_view.h"
#include "ui/widgets/kernel_view.h"
#include "ui/widgets/ladder_view.h"
#include "ui/widgets/main_window.h"
#include "ui/widgets/memory_view.h"
#include "ui/widgets/multihead_view.h"
#include "ui/widgets/program_view.h"
#include "ui/widgets/run_controller.h"
#include "ui/widgets/scenario_panel.h"
#include "ui/widgets/strategies_view.h"

#include <QtTest/QtTest>

#include <QAction>
#include <QComboBox>
#include <QDockWidget>
#include <QLineEdit>
#include <QScreen>
#include <QSettings>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>

using namespace matmulviz;
using namespace matmulviz::ui;

namespace {

constexpr int kRunMs = 120'000;  // a small scenario, generous for the sanitizer build

/// The "small" preset, shrunk further so each run takes milliseconds.
Scenario smallScenario(bool backward) {
  Scenario s = Scenario::fromPreset(loadPreset("small"));
  s.config.repeats = 1;
  s.config.backward = backward;
  return s;
}

bool runAndWait(MainWindow& w, const Scenario& s) {
  w.scenarioPanel()->setScenario(s);
  w.runStrategies();
  return QTest::qWaitFor([&] { return !w.runController()->isRunning(); }, kRunMs);
}

}  // namespace

class TestMainWindow : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QString historyPath() const { return dir_.filePath("history.json"); }

 private slots:
  void initTestCase() {
    QCoreApplication::setOrganizationName("matmulviz-tests");
    QCoreApplication::setApplicationName("test_main_window");
    QSettings().clear();
  }

  // A fresh settings folder: the window takes most of the screen and the Scenario dock shows
  // its fields, not just its labels; the empty speed ladder says what fills it.
  void firstStartIsUsable() {
    QSettings().clear();
    MainWindow w(historyPath());
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QTest::qWait(50);  // the dock is sized once the window is laid out
    const QRect screen = w.screen()->availableGeometry();
    QVERIFY2(w.width() >= screen.width() * 8 / 10,
             qPrintable(QString("%1 of %2").arg(w.width()).arg(screen.width())));
    QVERIFY(w.height() >= screen.height() * 8 / 10);
    QVERIFY(screen.contains(w.frameGeometry().topLeft()));
    auto* dock = w.findChild<QDockWidget*>("scenarioDock");
    QVERIFY(dock);
    const int wanted = std::min(w.scenarioPanel()->sizeHint().width(), w.width() / 3);
    QVERIFY2(dock->width() >= wanted,
             qPrintable(QString("dock %1 px, panel wants %2").arg(dock->width()).arg(wanted)));
    auto* ladder = w.findChild<LadderChart*>();
    QVERIFY(ladder);
    QVERIFY(ladder->placeholderText().contains("Run the speed ladder"));
  }

  void opensSixViews() {
    MainWindow w(historyPath());
    w.show();
    auto* tabs = w.findChild<QTabWidget*>("views");
    QVERIFY(tabs);
    QCOMPARE(tabs->count(), 7);
    QCOMPARE(tabs->widget(int(MainWindow::View::Budget)), w.budgetView());
    bool budgetShortcut = false;  // View > Budget, Ctrl+6 like the others' Ctrl+1..5
    for (QAction* a : w.findChildren<QAction*>())
      budgetShortcut = budgetShortcut || (a->text() == "Budget" &&
                                          a->shortcut() == QKeySequence(QStringLiteral("Ctrl+6")));
    QVERIFY(budgetShortcut);
    QCOMPARE(tabs->widget(int(MainWindow::View::Program)), w.programView());
    bool programShortcut = false;  // View > Program, Ctrl+7 after the Budget view's Ctrl+6
    for (QAction* a : w.findChildren<QAction*>())
      programShortcut =
          programShortcut ||
          (a->text() == "Program" && a->shortcut() == QKeySequence(QStringLiteral("Ctrl+7")));
    QVERIFY(programShortcut);
    for (int v = 0; v < 7; ++v) {
      w.showView(MainWindow::View(v));
      QCOMPARE(tabs->currentIndex(), v);
    }
  }

  void runFillsTheViews() {
    MainWindow w(historyPath());
    w.show();
    w.history()->clear();
    QVERIFY(runAndWait(w, smallScenario(true)));
    QVERIFY2(w.lastError().isEmpty(), qPrintable(w.lastError()));
    QCOMPARE(w.history()->size(), 1);
    QCOMPARE(w.history()->entries().back().results.size(), 5);
    // Strategies: one bar series per requires_grad setting, one point per strategy.
    QCOMPARE(w.strategiesView()->tableModel()->rowCount(), 5);
    const QStringList series = w.strategiesView()->memoryChart()->seriesNames();
    QVERIFY2(!series.isEmpty(), "no series in the memory chart");
    QCOMPARE(w.strategiesView()->memoryChart()->pointCount(series.front()), 5);
    QVERIFY(w.strategiesView()->explanation().contains("strategy1"));
    // Memory: the timeline of a strategy, its events charted.
    QVERIFY(w.memoryView()->model()->rowCount() > 0);
    QVERIFY(!w.memoryView()->chart()->seriesNames().isEmpty());
    // Gradients: dA of one strategy, and it agrees with the others'.
    QVERIFY(w.gradientsView()->model()->rows() > 0);
    w.gradientsView()->select("dC", "strategy1", "fused");
    QVERIFY(w.gradientsView()->maxDifference() < 1e-4);
    QVERIFY(w.gradientsView()->chart()->pointCount(
                w.gradientsView()->chart()->seriesNames().value(0)) > 0);
  }

  void multiheadViewRunsAndFeedsGradients() {
    MainWindow w(historyPath());
    w.show();
    w.showView(MainWindow::View::Multihead);
    MultiheadConfig c;  // b 2, s 8, h 16, e 4, 4 heads
    c.topP = 0.1;
    c.topK = 3;
    c.backward = true;
    w.multiheadView()->setConfig(c);
    QVERIFY(QTest::qWaitFor([&] { return !w.multiheadView()->isRunning(); }, kRunMs));
    const auto report = w.multiheadView()->report();
    QVERIFY(report);
    QVERIFY(report->t <= 2 * 3);  // at most top_k per sequence
    QCOMPARE(report->O3.sizes(), (Shape{report->t, 4, 4}));
    w.gradientsView()->select("dW1", QString());
    QCOMPARE(w.gradientsView()->model()->rows(), 16);
    QCOMPARE(w.gradientsView()->model()->cols(), 4);
  }

  void outOfMemoryShowsInTheWindow() {
    MainWindow w(historyPath());
    Scenario s = smallScenario(false);
    s.config.deviceMemoryBytes = 64 * 1024;  // below what the inputs need
    const int before = w.history()->size();
    QVERIFY(runAndWait(w, s));
    QVERIFY2(w.lastError().contains("out of memory"), qPrintable("last error: " + w.lastError()));
    QCOMPARE(w.history()->size(), before + 1);  // the failed run is in the history too
  }

  void cudaDeviceRunsOrSaysWhyNot() {
    MainWindow w(historyPath());
    auto* device = w.scenarioPanel()->findChild<QComboBox*>("device");
    QVERIFY(device);
    const int row = device->findData("cuda");
    QVERIFY(row >= 0);  // offered, disabled with the reason when no GPU answers
    Scenario s = smallScenario(false);
    s.config.device = DeviceKind::Cuda;
    QVERIFY(runAndWait(w, s));
    if (kernels::probeCuda().available) {
      QVERIFY2(w.lastError().isEmpty(), qPrintable(w.lastError()));
    } else {
      QVERIFY(!device->itemData(row, Qt::ToolTipRole).toString().isEmpty());
      QVERIFY2(w.lastError().contains("CUDA"), qPrintable("last error: " + w.lastError()));
    }
  }

  void cancelStopsTheRun() {
    MainWindow w(historyPath());
    Scenario s = smallScenario(false);
    s.config.repeats = 20;
    w.scenarioPanel()->setScenario(s);
    w.runStrategies();
    QVERIFY(w.runController()->isRunning());
    w.cancelRun();
    QVERIFY(QTest::qWaitFor([&] { return !w.runController()->isRunning(); }, kRunMs));
    QVERIFY2(w.lastError().contains("Cancelled"), qPrintable("last error: " + w.lastError()));
    QVERIFY(!w.history()->entries().back().ok);
  }

  void badPresetFileNamesFileAndLine() {
    MainWindow w(historyPath());
    const QString path = dir_.filePath("broken.json");
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("{\n  \"workload\": {\"n\": 10,\n  \"oops\"\n}\n");
    f.close();
    const Scenario before = w.scenarioPanel()->scenario();
    QString error;
    QVERIFY(!w.scenarioPanel()->loadPresetFile(path, &error));
    QVERIFY2(error.startsWith("broken.json:"), qPrintable(error));  // the name, not the folder
    QCOMPARE(w.scenarioPanel()->scenario().config.workload.n, before.config.workload.n);
  }

  void badDeviceMemoryIsRefusedAtTheField() {
    MainWindow w(historyPath());
    auto* field = w.scenarioPanel()->findChild<QLineEdit*>("deviceMemory");
    QVERIFY(field);
    field->setText("12 parsecs");
    QVERIFY(!w.scenarioPanel()->isValid());
    const int before = w.history()->size();
    w.runStrategies();  // refused: nothing starts
    QVERIFY(!w.runController()->isRunning());
    QCOMPARE(w.history()->size(), before);
    field->setText("2GiB");
    QVERIFY(w.scenarioPanel()->isValid());
  }

  void shortcutsDriveTheAnimation() {
    MainWindow w(historyPath());
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.showView(MainWindow::View::Kernel);
    w.kernelView()->setLaunch({"naive", 5, 16, 10, 16, 0});
    QVERIFY(QTest::qWaitFor([&] { return !w.kernelView()->isSimulating(); }, kRunMs));
    QVERIFY(w.kernelView()->stepCount() > 1);
    w.kernelView()->seek(0);
    QTest::keyClick(&w, Qt::Key_Right);
    QCOMPARE(w.kernelView()->currentStep(), 1);
    QTest::keyClick(&w, Qt::Key_Space);
    QVERIFY(w.kernelView()->isPlaying());
    QTest::keyClick(&w, Qt::Key_Space);
    QVERIFY(!w.kernelView()->isPlaying());
    w.kernelView()->seekToEnd();
    QCOMPARE(w.kernelView()->currentStep(), w.kernelView()->stepCount() - 1);
  }

  void faultyKernelShowsItsRace() {
    MainWindow w(historyPath());
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    KernelView* view = w.kernelView();
    const auto shown = [&](const char* kernel) {
      return QTest::qWaitFor(
          [&] {
            return !view->isSimulating() && view->model().result() != nullptr &&
                   view->model().result()->spec.kernel == QLatin1String(kernel);
          },
          kRunMs);
    };
    // a user picks the teaching kernel in the scenario panel
    ScenarioPanel* panel = w.scenarioPanel();
    panel->setKernelLaunch("naive", 40, 37, 33, 8);
    auto* combo = panel->findChild<QComboBox*>("kernel");
    QVERIFY(combo);
    QCOMPARE(combo->itemData(0).toString(), QString("naive"));
    const int index = combo->findData(QString("smem_tiled_no_sync"));
    QVERIFY(index > combo->findData(QString("smem_tiled")));
    QCOMPARE(combo->itemText(index), QString("smem_tiled_no_sync (faulty, for teaching)"));
    combo->setCurrentIndex(index);
    emit combo->activated(index);
    QCOMPARE(panel->scenario().kernel, QString("smem_tiled_no_sync"));  // saved by its name
    QVERIFY(shown("smem_tiled_no_sync"));
    const KernelLaunchResult* r = view->model().result();
    QCOMPARE(r->spec.m, 40);
    QVERIFY(r->geometry.tiled);
    QVERIFY(r->run.report.diagnosticCounts.sharedRaces > 0);
    QCOMPARE(r->run.report.diagnosticCounts.outOfBounds, 0ull);
    // ... and sees the race listed beside the diagram
    auto* table = view->findChild<QTableView*>("diagnostics");
    QVERIFY(table);
    QVERIFY(table->model()->rowCount() > 0);
    QCOMPARE(table->model()->index(0, 0).data().toString(), QString("shared_race"));
    // the Lessons menu has it as lesson 5, after the shared-memory tiles
    const auto lesson = [&](const QString& prefix) -> QAction* {
      for (QAction* a : w.findChildren<QAction*>())
        if (a->text().startsWith(prefix)) return a;
      return nullptr;
    };
    QVERIFY(lesson("7. The same with requires_grad"));
    QAction* tiles = lesson("4. Shared-memory tiles");
    QAction* race = lesson("5. A missing barrier");
    QVERIFY(tiles && race);
    tiles->trigger();
    QVERIFY(shown("smem_tiled"));
    QCOMPARE(view->model().result()->run.report.diagnosticCounts.total(), 0ull);
    race->trigger();
    QVERIFY(shown("smem_tiled_no_sync"));
    QCOMPARE(combo->currentData().toString(), QString("smem_tiled_no_sync"));
    QVERIFY(view->model().result()->run.report.diagnosticCounts.sharedRaces > 0);
  }

  void ladderChartsEveryCpuRung() {
    MainWindow w(historyPath());
    w.ladderView()->run(64, 32, 16, 8);
    QVERIFY(QTest::qWaitFor([&] { return !w.ladderView()->isRunning(); }, kRunMs));
    const auto& rungs = w.ladderView()->chart()->rungs();
    QVERIFY2(rungs.size() >= 4, "simulated, loop, einsum and blas");
    QCOMPARE(rungs.front().name, QString("simulated"));
    for (const auto& r : rungs) QVERIFY2(r.ok && r.seconds > 0, qPrintable(r.name + ": " + r.note));
  }

  void classroomModeEnlarges() {
    MainWindow w(historyPath());
    w.show();
    const qreal normal = QApplication::font().pointSizeF();
    w.setClassroomMode(true);
    QVERIFY(w.classroomMode());
    QVERIFY(QApplication::font().pointSizeF() > normal);
    QVERIFY(w.kernelView()->presentationMode());
    // Disabled controls still look disabled in the high-contrast palette.
    const QPalette p = QApplication::palette();
    QVERIFY(p.color(QPalette::Disabled, QPalette::ButtonText) !=
            p.color(QPalette::Active, QPalette::ButtonText));
    QVERIFY(p.color(QPalette::Disabled, QPalette::WindowText) !=
            p.color(QPalette::Active, QPalette::WindowText));
    w.setClassroomMode(false);
    QCOMPARE(QApplication::font().pointSizeF(), normal);
  }

  void historyAndScenarioSurviveARestart() {
    int runs = 0;
    {
      MainWindow w(historyPath());
      Scenario s = smallScenario(false);
      s.config.workload.batch = 7;
      QVERIFY(runAndWait(w, s));
      runs = w.history()->size();
      w.close();
    }
    MainWindow again(historyPath());
    QCOMPARE(again.history()->size(), runs);
    QCOMPARE(again.scenarioPanel()->scenario().config.workload.batch, int64_t(7));
  }
};

QTEST_MAIN(TestMainWindow)
#include "test_main_window.moc"
