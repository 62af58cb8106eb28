// The real snapshots of tests/reference/gpu/snapshots (PyTorch 2.11 on an H200) opened in the
// main window, offscreen, as a user opens them (File > Open's openFiles, the .pickle.gz as it
// is): one count of events everywhere (the Memory view's header, the allocator-state panel, the
// status bar and the bands chart's peak), the Scenario panel saying what is open and going back
// to the scenario, and the peak named by its op rather than by the recorder's frames.
#include "ui/charts/allocation_bands_chart.h"
#include "ui/models/memory_timeline_model.h"
#include "ui/widgets/file_loader.h"
#include "ui/widgets/main_window.h"
#include "ui/widgets/memory_view.h"
#include "ui/widgets/scenario_panel.h"
#include "ui/widgets/segments_panel.h"

#include <QtTest/QtTest>

#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QSpinBox>
#include <QTabWidget>
#include <QTemporaryDir>

using namespace matmulviz;
using namespace matmulviz::ui;

namespace {

constexpr int kLoadMs = 60'000;

/// The integer that `pattern`'s first group captures in `text`, digit grouping removed; -1 when
/// it does not match.
qint64 number(const QString& text, const QString& pattern) {
  const QRegularExpressionMatch m = QRegularExpression(pattern).match(text);
  if (!m.hasMatch()) return -1;
  QString digits = m.captured(1);
  digits.remove(QRegularExpression("[^0-9]"));
  return digits.toLongLong();
}

}  // namespace

class TestGpuSnapshotsView : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QString historyPath() const { return dir_.filePath("history.json"); }
  bool open(MainWindow& w, const QString& path) {
    w.openFiles({path});
    return w.fileLoader()->wait(kLoadMs);
  }

 private slots:
  void initTestCase() {
    QCoreApplication::setOrganizationName("matmulviz-tests");
    QCoreApplication::setApplicationName("test_gpu_snapshots_view");
    QSettings().clear();
  }

  void oneCountOfEvents_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<qint64>("events");  // allocations + frees completed + segment allocations
    QTest::newRow("transformer") << "transformer_adamw_3_steps.pickle.gz" << qint64(632 + 522 + 28);
    QTest::newRow("forum") << "forum_cpp_stacks.pickle.gz" << qint64(7422 + 7416 + 12);
  }
  void oneCountOfEvents() {
    QFETCH(QString, file);
    QFETCH(qint64, events);
    MainWindow w(historyPath());
    w.resize(1400, 900);
    w.show();
    QVERIFY(open(w, MATMULVIZ_GPU_SNAPSHOT_DIR "/" + file));
    QVERIFY(!w.findChild<QMessageBox*>("openErrorBox"));
    QCOMPARE(w.findChild<QTabWidget*>("views")->currentIndex(), int(MainWindow::View::Memory));
    MemoryView* view = w.memoryView();
    QCOMPARE(qint64(view->model()->eventCount()), events);
    const qint64 peak = view->model()->peakEvent();
    QVERIFY(peak > 0);

    const QString header = view->findChild<QLabel*>("memorySummary")->text();
    QCOMPARE(number(header, R"(cuda:0: ([\d,. ]+) events)"), events);
    QCOMPARE(number(header, R"(peak allocated [^()]* at event ([\d,. ]+))"), peak);

    const QString status = w.findChild<QLabel*>("statusText")->text();
    QCOMPARE(number(status, R"(snapshot, ([\d,. ]+) events)"), events);

    // The allocator-state panel starts at the header's peak and counts the same events.
    SegmentsPanel* panel = view->segments();
    QVERIFY(panel->isVisible());
    QCOMPARE(panel->event(), peak);
    const QString state = panel->findChild<QLabel*>("segmentsEventText")->text();
    QCOMPARE(number(state, R"(after event ([\d,. ]+) of)"), peak);
    QCOMPARE(number(state, R"(of ([\d,. ]+))"), events);
    auto* spin = panel->findChild<QSpinBox*>("segmentsEvent");
    QCOMPARE(qint64(spin->value()), peak);
    QCOMPARE(qint64(spin->maximum()), events - 1);

    // The bands chart's x counts steps; its peak is labelled with the header's event, and only
    // with it (one count for one moment).
    AllocationBandsChart* bands = view->bandsChart();
    QVERIFY(bands->isVisible());
    const QString label = bands->peakText();
    QCOMPARE(number(label, R"(at event ([\d,. ]+))"), peak);
    QVERIFY2(!label.contains("step"), qPrintable(label));
    QVERIFY2(!header.contains("block block"), qPrintable(header));

    // The Scenario panel says what is open, with the same numbers, and goes back on request.
    auto* scenario = w.findChild<ScenarioPanel*>();
    QVERIFY(scenario->showsOpenedFile());
    const QString opened = scenario->openedFileText();
    QVERIFY2(opened.contains(file) && opened.contains("PyTorch memory snapshot") &&
                 opened.contains("cuda:0"),
             qPrintable(opened));
    QCOMPARE(number(opened, R"(cuda:0: ([\d,. ]+) events)"), events);
    QCOMPARE(number(opened, R"(at event ([\d,. ]+))"), peak);
    QVERIFY(!scenario->findChild<QWidget*>("preset")->isVisible());
    scenario->findChild<QPushButton*>("backToScenario")->click();
    QVERIFY(!scenario->showsOpenedFile());
    QVERIFY(scenario->findChild<QWidget*>("preset")->isVisible());
    QCOMPARE(w.findChild<QTabWidget*>("views")->currentIndex(), int(MainWindow::View::Strategies));
  }

  // The forum workload's peak (269 MiB, during backward: matmul's clone of an input, under
  // Blas.cpp) is named by its dispatcher op, not by the recorder's gather_with_cpp() in
  // memory_snapshot.cpp.
  void peakNamedByItsOp() {
    MainWindow w(historyPath());
    QVERIFY(open(w, MATMULVIZ_GPU_SNAPSHOT_DIR "/forum_cpp_stacks.pickle.gz"));
    const QString peak = w.memoryView()->model()->peakText();
    QVERIFY2(peak.contains("269 MiB") && peak.contains("op clone"), qPrintable(peak));
    QVERIFY2(!peak.contains("gather_with_cpp") && !peak.contains("memory_snapshot.cpp"),
             qPrintable(peak));
  }
};

QTEST_MAIN(TestGpuSnapshotsView)
#include "test_gpu_snapshots_view.moc"
