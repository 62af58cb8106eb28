// StrategiesTableModel over a RunHistory fed with real reports: one row per (run, strategy),
// numbers as in the report, incremental inserts, resets, CSV; under QAbstractItemModelTester.

#include "tests/models/strategies_fixture.h"
#include "ui/models/strategies_table_model.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QtTest/QtTest>

using namespace matmulviz;
using namespace matmulviz::ui;
using Col = StrategiesTableModel::Column;

class TestStrategiesTableModel : public QObject {
  Q_OBJECT
 private slots:
  void rowsFollowTheHistory_data();
  void rowsFollowTheHistory();
  void displayHasUnits_data();
  void displayHasUnits();
  void failedResultShowsItsError();
  void failedRunIsOneRow_data();
  void failedRunIsOneRow();
  void csvHasOneLinePerRow();
  void resetOnClearAndLoad();
};

namespace {

RunEntry entry(bool gradA, bool gradC, const std::vector<std::string>& strategies) {
  testing::SmallRun r;
  r.requiresGradA = gradA;
  r.requiresGradC = gradC;
  r.strategies = strategies;
  return runEntryFromReport(testing::runSmall(r), "small", costmodel::findGpuProfile("h100"));
}

}  // namespace

void TestStrategiesTableModel::rowsFollowTheHistory_data() {
  QTest::addColumn<QList<int>>("strategiesPerRun");
  QTest::newRow("one run, all strategies") << QList<int>{5};
  QTest::newRow("three runs") << QList<int>{5, 2, 1};
  QTest::newRow("a run with one strategy first") << QList<int>{1, 5};
}

void TestStrategiesTableModel::rowsFollowTheHistory() {
  QFETCH(QList<int>, strategiesPerRun);
  const std::vector<std::string> all{"strategy1", "strategy2", "strategy3", "direct", "fused"};
  RunHistory history;
  StrategiesTableModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  model.setHistory(&history);
  QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
  int rows = 0;
  for (int i = 0; i < strategiesPerRun.size(); ++i) {
    const int n = strategiesPerRun[i];
    const bool gradA = i % 2 == 1;
    const StrategiesReport report =
        testing::runSmall({DeviceKind::Meta, gradA, false, false, {all.begin(), all.begin() + n}});
    history.append(runEntryFromReport(report, QString("run %1").arg(i), nullptr));
    QCOMPARE(inserted.size(), i + 1);
    QCOMPARE(inserted.last()[1].toInt(), rows);
    QCOMPARE(inserted.last()[2].toInt(), rows + n - 1);
    for (int k = 0; k < n; ++k) {
      const StrategyRun& r = report.runs[size_t(k)];
      auto raw = [&](int col) {
        return model.index(rows + k, col).data(StrategiesTableModel::RawRole);
      };
      QCOMPARE(raw(Col::Run).toInt(), i + 1);
      QCOMPARE(raw(Col::Strategy).toString(), QString::fromStdString(r.strategy));
      QCOMPARE(raw(Col::RequiresGrad).toString(), gradA ? QString("a") : QString("none"));
      QCOMPARE(raw(Col::MaxMemMiB).toDouble(), r.peak.allocatedBytes / 1048576.0);
      QCOMPARE(raw(Col::CurMemMiB).toDouble(), r.current.allocatedBytes / 1048576.0);
      QCOMPARE(raw(Col::TimeMedianS).toDouble(), r.time.median);
      QVERIFY(!raw(Col::PredictedS).isValid());  // no GPU profile given
      QVERIFY(!raw(Col::MaxRelErr).isValid());   // meta: not computed
      QCOMPARE(raw(Col::Status).toString(), QString("ok"));
      QCOMPARE(model.rowRef(rows + k).entry, i);
      QCOMPARE(model.rowRef(rows + k).result, k);
    }
    rows += n;
    QCOMPARE(model.rowCount(), rows);
  }
  QCOMPARE(model.headerData(Col::MaxMemMiB, Qt::Horizontal).toString(), QString("maxMem"));
}

void TestStrategiesTableModel::displayHasUnits_data() {
  QTest::addColumn<double>("seconds");
  QTest::addColumn<qint64>("maxMemBytes");
  QTest::addColumn<QString>("timeText");
  QTest::addColumn<QString>("maxMemText");
  QTest::newRow("microseconds, KiB") << 3.586e-5 << qint64(3584) << "35.9 us"
                                     << "3.5 KiB";
  QTest::newRow("forum workload: ms, GiB") << 0.9036 << qint64(2208) * 1024 * 1024 << "904 ms"
                                           << "2.16 GiB";
  QTest::newRow("seconds, MiB") << 2.34 << qint64(160) * 1024 * 1024 << "2.34 s"
                                << "160 MiB";
}

void TestStrategiesTableModel::displayHasUnits() {
  QFETCH(double, seconds);
  QFETCH(qint64, maxMemBytes);
  QFETCH(QString, timeText);
  QFETCH(QString, maxMemText);
  RunHistory history;
  StrategiesTableModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  model.setHistory(&history);
  RunEntry e;
  StrategyResult r;
  r.strategy = "direct";
  r.timeMedianS = seconds;
  r.maxMemBytes = maxMemBytes;
  e.results << r;
  history.append(e);
  QCOMPARE(model.index(0, Col::TimeMedianS).data().toString(), timeText);
  QCOMPARE(model.index(0, Col::MaxMemMiB).data().toString(), maxMemText);
  // the number stays in RawRole and EditRole, for sorting
  QCOMPARE(model.index(0, Col::TimeMedianS).data(StrategiesTableModel::RawRole).toDouble(),
           seconds);
  QCOMPARE(model.index(0, Col::MaxMemMiB).data(Qt::EditRole).toDouble(), maxMemBytes / 1048576.0);
}

void TestStrategiesTableModel::failedResultShowsItsError() {
  RunHistory history;
  StrategiesTableModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  model.setHistory(&history);
  RunEntry e;
  StrategyResult r;
  r.strategy = "direct";
  r.ok = false;
  r.error = "out of memory";
  e.results << r;
  history.append(e);
  QCOMPARE(model.rowCount(), 1);
  QCOMPARE(model.index(0, Col::Status).data().toString(), QString("out of memory"));
  QCOMPARE(model.index(0, Col::Status).data(Qt::ToolTipRole).toString(), QString("out of memory"));
  QCOMPARE(model.index(0, Col::TimeMedianS).data().toString(), QString());
  QCOMPARE(model.index(0, Col::MaxMemMiB).data().toString(), QString("-"));
}

void TestStrategiesTableModel::failedRunIsOneRow_data() {
  QTest::addColumn<QString>("error");
  QTest::addColumn<bool>("successFirst");
  QTest::newRow("refused before running") << "workload too large for this machine" << false;
  QTest::newRow("cancelled, after a run") << "Cancelled by the user." << true;
  QTest::newRow("out of host memory, after a run") << "Out of host memory" << true;
}

// A run that failed as a whole has no results; it still shows, marked failed, with its message.
void TestStrategiesTableModel::failedRunIsOneRow() {
  QFETCH(QString, error);
  QFETCH(bool, successFirst);
  RunHistory history;
  StrategiesTableModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  model.setHistory(&history);
  if (successFirst) history.append(entry(false, false, {"fused", "direct"}));
  const int before = model.rowCount();
  RunEntry failed;
  failed.title = "huge";
  failed.requiresGrad = "a";
  failed.ok = false;
  failed.error = error;
  history.append(failed);
  QCOMPARE(model.rowCount(), before + 1);
  auto cell = [&](int col, int role = Qt::DisplayRole) {
    return model.index(before, col).data(role).toString();
  };
  QCOMPARE(cell(Col::Title), QString("huge"));
  QCOMPARE(cell(Col::Strategy), QString("(run failed)"));
  QCOMPARE(cell(Col::RequiresGrad), QString("a"));
  QCOMPARE(cell(Col::Status), error);
  QCOMPARE(cell(Col::Status, Qt::ToolTipRole), error);
  QCOMPARE(cell(Col::MaxMemMiB), QString());
  QCOMPARE(model.rowRef(before).result, -1);
  const QStringList lines = model.toCsv().split('\n', Qt::SkipEmptyParts);
  QCOMPARE(lines.size(), before + 2);
  QVERIFY2(lines.last().contains("(run failed)"), qPrintable(lines.last()));
  // ... and after a reload (history.json)
  QString loadError;
  QVERIFY(history.fromJson(history.toJson(), &loadError));
  QCOMPARE(model.rowCount(), before + 1);
  QCOMPARE(cell(Col::Status), error);
}

void TestStrategiesTableModel::csvHasOneLinePerRow() {
  RunHistory history;
  history.append(entry(true, false, {"strategy3", "direct"}));
  StrategiesTableModel model;
  model.setHistory(&history);
  const QStringList lines = model.toCsv().split('\n', Qt::SkipEmptyParts);
  QCOMPARE(lines.size(), 3);
  QVERIFY(lines[0].startsWith("run,title,strategy,requires_grad,time_median_s"));
  QVERIFY2(lines[1].startsWith("1,small,strategy3,a,"), qPrintable(lines[1]));
  const QStringList fields = lines[2].split(',');
  QCOMPARE(fields.size(), int(Col::ColumnCount));
  QCOMPARE(fields[Col::MaxMemMiB].toDouble(),
           history.entries()[0].results[1].maxMemBytes / 1048576.0);
  QVERIFY(fields[Col::PredictedS].toDouble() > 0);
  QCOMPARE(csvField("a,b"), QString("\"a,b\""));
  QCOMPARE(csvField("say \"x\""), QString("\"say \"\"x\"\"\""));
}

void TestStrategiesTableModel::resetOnClearAndLoad() {
  RunHistory history;
  history.append(entry(false, false, {"fused"}));
  StrategiesTableModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  model.setHistory(&history);
  QCOMPARE(model.rowCount(), 1);
  const QJsonDocument saved = history.toJson();
  QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
  history.clear();
  QCOMPARE(model.rowCount(), 0);
  QString error;
  QVERIFY(history.fromJson(saved, &error));
  QCOMPARE(model.rowCount(), 1);
  QCOMPARE(reset.size(), 2);
  model.setHistory(nullptr);
  QCOMPARE(model.rowCount(), 0);
  history.append(entry(false, false, {"fused"}));  // no longer followed
  QCOMPARE(model.rowCount(), 0);
  {
    RunHistory shortLived;
    shortLived.append(entry(false, false, {"fused", "direct"}));
    model.setHistory(&shortLived);
    QCOMPARE(model.rowCount(), 2);
  }
  QCOMPARE(model.rowCount(), 0);  // emptied when the history was destroyed
}

QTEST_GUILESS_MAIN(TestStrategiesTableModel)
#include "test_strategies_table_model.moc"
