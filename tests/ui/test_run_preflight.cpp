// The app's runs refuse and end as the CLI's do (issue 17, points 6 and 16): a workload beyond
// this machine's RAM is refused by the same preflight before anything is allocated (no raw
// std::bad_alloc), a cancelled run says "cancelled", and runs that failed as a whole are rows of
// the run table, marked failed, with their message.

#include "core/memory/host_backing.h"
#include "ui/models/run_history.h"
#include "ui/models/strategies_table_model.h"
#include "ui/widgets/main_window.h"
#include "ui/widgets/run_controller.h"
#include "ui/widgets/scenario_panel.h"
#include "ui/widgets/strategies_view.h"

#include <QtTest/QtTest>

#include <QElapsedTimer>
#include <QFile>
#include <QLabel>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>

using namespace matmulviz;
using namespace matmulviz::ui;

namespace {

constexpr int kRunMs = 120'000;

/// A line of /proc/self/status in bytes: "VmHWM" (peak resident memory so far), "VmRSS".
qint64 statusBytes(const QByteArray& key) {
  QFile f("/proc/self/status");
  if (!f.open(QIODevice::ReadOnly)) return -1;
  for (const QByteArray& line : f.readAll().split('\n'))
    if (line.startsWith(key + ':'))
      return line.mid(key.size() + 1).trimmed().split(' ').value(0).toLongLong() * 1024;
  return -1;
}

qint64 peakRssBytes() {
  return statusBytes("VmHWM");
}

Scenario huge(DeviceKind device, int64_t n) {
  Scenario s = Scenario::fromPreset(loadPreset("small"));
  s.title = "huge";
  s.config.workload.n = n;
  s.config.workload.j = 64;
  s.config.device = device;
  s.config.repeats = 1;
  return s;
}

QString statusText(const MainWindow& w) {
  const auto* label = w.findChild<QLabel*>("statusText");
  return label ? label->text() : QString();
}

}  // namespace

class TestRunPreflight : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

 private slots:
  void initTestCase() {
    QCoreApplication::setOrganizationName("matmulviz-tests");
    QCoreApplication::setApplicationName("test_run_preflight");
    QSettings().clear();
  }

  // The controller alone: the failure comes from the preflight, worded for the panel, fast.
  void controllerRefusesBeforeAllocating_data() {
    QTest::addColumn<int>("device");
    QTest::addColumn<qint64>("n");
    QTest::addColumn<QStringList>("words");
    QTest::newRow("cpu, N = 999,999,999")
        << int(DeviceKind::Cpu) << qint64(999'999'999)
        << QStringList{"workload too large", "GiB", "available", "meta device"};
    QTest::newRow("meta, q beyond RAM")
        << int(DeviceKind::Meta) << qint64(1) << QStringList{"host index q", "85%"};
  }

  void controllerRefusesBeforeAllocating() {
    QFETCH(int, device);
    QFETCH(qint64, n);
    QFETCH(QStringList, words);
    const qint64 rows = n > 1 ? n : availableHostMemoryBytes() / 8 + 1;
    RunController controller;
    QSignalSpy failed(&controller, &RunController::failed);
    QSignalSpy finished(&controller, &RunController::finished);
    const qint64 peakBefore = peakRssBytes();
    QElapsedTimer clock;
    clock.start();
    QVERIFY(controller.start(huge(DeviceKind(device), rows)));
    QVERIFY(controller.wait(kRunMs));
    QCOMPARE(finished.size(), 0);
    QCOMPARE(failed.size(), 1);
    const QString message = failed.front().front().toString();
    for (const QString& word : words) QVERIFY2(message.contains(word), qPrintable(message));
    QVERIFY2(!message.contains("bad_alloc") && !message.contains("--"), qPrintable(message));
    QVERIFY2(clock.elapsed() < 10'000, "refused before the work, not after");
    QVERIFY2(peakRssBytes() - peakBefore < (qint64(256) << 20), "nothing large was allocated");
  }

  // The pages a run touched go back to the OS when it ends: c[q] of 256 MiB is not resident
  // after direct has run (the engine's arena would keep it for the next run otherwise).
  void memoryIsReleasedAfterARun() {
#ifdef MATMULVIZ_SANITIZED_BUILD
    QSKIP(
        "AddressSanitizer's allocator keeps freed memory in its quarantine; the release build "
        "checks that the pages go back to the OS");
#endif
    Scenario s = Scenario::fromPreset(loadPreset("small"));
    s.config.workload = {16384, 64, 1, 64, 64, 256, DType::Float32};
    s.config.strategies = {"direct"};
    s.config.repeats = 1;
    RunController controller;
    QSignalSpy finished(&controller, &RunController::finished);
    const qint64 before = statusBytes("VmRSS");
    QVERIFY(controller.start(s));
    QVERIFY(controller.wait(kRunMs));
    QCOMPARE(finished.size(), 1);
    const auto report = finished.front().front().value<std::shared_ptr<const StrategiesReport>>();
    QVERIFY(report->runs.front().peak.allocatedBytes >= (qint64(256) << 20));
    QVERIFY(peakRssBytes() - before >= (qint64(200) << 20));  // c[q] was touched
    const qint64 after = statusBytes("VmRSS");
    QVERIFY2(after - before < (qint64(100) << 20),
             qPrintable(QStringLiteral("%1 MiB still resident").arg((after - before) >> 20)));
  }

  // The window: the message above the views, the run in the history and in the run table.
  void windowShowsTheRefusal() {
    MainWindow w(dir_.filePath("history.json"));
    w.scenarioPanel()->setScenario(huge(DeviceKind::Cpu, 999'999'999));
    w.runStrategies();
    QVERIFY(QTest::qWaitFor([&] { return !w.runController()->isRunning(); }, kRunMs));
    QVERIFY2(w.lastError().contains("workload too large"), qPrintable(w.lastError()));
    QVERIFY(statusText(w).contains("failed"));
    QVERIFY(!w.history()->entries().back().ok);
    const StrategiesTableModel* table = w.strategiesView()->tableModel();
    const int last = table->rowCount() - 1;
    QVERIFY(last >= 0);
    QCOMPARE(table->index(last, StrategiesTableModel::Strategy).data().toString(),
             QString("(run failed)"));
    QVERIFY(table->index(last, StrategiesTableModel::Status)
                .data()
                .toString()
                .contains("workload too large"));
  }

  void cancelSaysCancelled() {
    MainWindow w(dir_.filePath("history.json"));
    Scenario s = Scenario::fromPreset(loadPreset("small"));
    s.config.repeats = 50;
    w.scenarioPanel()->setScenario(s);
    w.runStrategies();
    QVERIFY(w.runController()->isRunning());
    w.cancelRun();
    QVERIFY(QTest::qWaitFor([&] { return !w.runController()->isRunning(); }, kRunMs));
    QVERIFY2(statusText(w).endsWith("cancelled"), qPrintable(statusText(w)));
    QVERIFY(!statusText(w).contains("failed"));
    const StrategiesTableModel* table = w.strategiesView()->tableModel();
    QCOMPARE(table->index(table->rowCount() - 1, StrategiesTableModel::Status).data().toString(),
             QString("Cancelled by the user."));
  }
};

QTEST_MAIN(TestRunPreflight)
#include "test_run_preflight.moc"
