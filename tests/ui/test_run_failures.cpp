// A run that fails loses nothing else: after a good run, each kind of failure the worker can meet
// leaves the earlier history entries, the Memory and Gradients views and the window as they
// were, says what failed (the error banner, and a failed entry in the history), and the next
// run works. Kinds: every strategy out of device memory (the runner's own report), and an
// exception thrown in the worker (a workload too large for this machine's RAM, refused before
// any allocation). The GUI reads no .npy file and runs no Python script, so those kinds have no
// GUI path yet.
#include "ui/models/memory_timeline_model.h"
#include "ui/models/run_history.h"
#include "ui/models/strategies_table_model.h"
#include "ui/models/tensor_grid_model.h"
#include "ui/widgets/gradients_view.h"
#include "ui/widgets/main_window.h"
#include "ui/widgets/memory_view.h"
#include "ui/widgets/run_controller.h"
#include "ui/widgets/scenario_panel.h"
#include "ui/widgets/strategies_view.h"

#include <QSettings>
#include <QTemporaryDir>
#include <QtTest/QtTest>

using namespace matmulviz;
using namespace matmulviz::ui;

namespace {

constexpr int kRunMs = 120'000;

Scenario smallScenario() {
  Scenario s = Scenario::fromPreset(loadPreset("small"));
  s.config.repeats = 1;
  s.config.backward = true;
  return s;
}

bool runAndWait(MainWindow& w, const Scenario& s) {
  w.scenarioPanel()->setScenario(s);
  w.runStrategies();
  return QTest::qWaitFor([&] { return !w.runController()->isRunning(); }, kRunMs);
}

/// What a failed run must not change.
struct Snapshot {
  QList<QJsonValue> entries;  ///< the history's entries as JSON
  int memoryRows = 0;
  int gradientRows = 0;
  int gradientCols = 0;

  static Snapshot of(const MainWindow& w) {
    Snapshot s;
    const QJsonArray runs = w.history()->toJson().object().value("runs").toArray();
    for (const QJsonValue& v : runs) s.entries.append(v);
    s.memoryRows = w.memoryView()->model()->rowCount();
    s.gradientRows = w.gradientsView()->model()->rows();
    s.gradientCols = w.gradientsView()->model()->cols();
    return s;
  }
};

}  // namespace

class TestRunFailures : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

 private slots:
  void initTestCase() {
    QCoreApplication::setOrganizationName("matmulviz-tests");
    QCoreApplication::setApplicationName("test_run_failures");
    QSettings().clear();
  }

  void failureLeavesTheRestAsItWas_data() {
    QTest::addColumn<Scenario>("failing");
    QTest::addColumn<QString>("message");
    QTest::addColumn<bool>("reported");  ///< the runner's report (true) or a worker exception
    Scenario oom = smallScenario();
    oom.config.backward = false;
    oom.config.deviceMemoryBytes = 64 * 1024;  // below what the inputs need
    QTest::newRow("every strategy out of device memory") << oom << "out of memory" << true;
    Scenario huge = smallScenario();
    huge.config.backward = false;
    huge.config.strategies = {"direct"};
    huge.config.workload = {int64_t{1} << 20, 1, 1, 1, int64_t{1} << 16, 256, DType::Float32};
    QTest::newRow("worker exception: too large for this machine")
        << huge << "workload too large for this machine" << false;
  }
  void failureLeavesTheRestAsItWas() {
    QFETCH(Scenario, failing);
    QFETCH(QString, message);
    QFETCH(bool, reported);
    MainWindow w(dir_.filePath("history.json"));
    w.show();
    w.history()->clear();
    QVERIFY(runAndWait(w, smallScenario()));
    QVERIFY2(w.lastError().isEmpty(), qPrintable(w.lastError()));
    const Snapshot before = Snapshot::of(w);
    QVERIFY(before.memoryRows > 0 && before.gradientRows > 0);

    QVERIFY(runAndWait(w, failing));
    QVERIFY2(w.lastError().contains(message), qPrintable("last error: " + w.lastError()));
    const Snapshot after = Snapshot::of(w);
    // The history: the earlier entries untouched, one more that says what failed.
    QCOMPARE(after.entries.size(), before.entries.size() + 1);
    for (qsizetype i = 0; i < before.entries.size(); ++i)
      QCOMPARE(after.entries[i], before.entries[i]);
    const RunEntry& failed = w.history()->entries().back();
    if (reported) {
      for (const StrategyResult& r : failed.results) QVERIFY2(!r.ok, qPrintable(r.strategy));
    } else {
      QVERIFY(!failed.ok);
      QVERIFY2(failed.error.contains(message), qPrintable(failed.error));
    }
    // The Gradients view keeps the last run that had gradients; after a worker exception the
    // Memory view keeps the last report (a reported failure shows its own timeline).
    QCOMPARE(after.gradientRows, before.gradientRows);
    QCOMPARE(after.gradientCols, before.gradientCols);
    if (!reported) QCOMPARE(after.memoryRows, before.memoryRows);
    // The file on disk holds the same, and the window runs again.
    RunHistory saved;
    QString error;
    QVERIFY2(saved.load(dir_.filePath("history.json"), &error), qPrintable(error));
    QCOMPARE(saved.size(), w.history()->size());
    QVERIFY(runAndWait(w, smallScenario()));
    QVERIFY2(w.history()->entries().back().results.size() == 5, "the next run did not work");
  }
};

QTEST_MAIN(TestRunFailures)
#include "test_run_failures.moc"
