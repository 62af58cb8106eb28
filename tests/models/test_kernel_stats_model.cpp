// The Kernel view's tables, GUI-free and under QAbstractItemModelTester: statistics of a launch
// and the simulator's diagnostics.
#include <QAbstractItemModelTester>
#include <QtTest>

#include "ui/models/kernel_stats_model.h"

using namespace matmulviz;
using namespace matmulviz::ui;

class TestKernelStatsModel : public QObject {
  Q_OBJECT

 private slots:
  void statistics_data() {
    QTest::addColumn<QString>("kernel");
    QTest::addColumn<int>("m");
    QTest::addColumn<int>("k");
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("tpb");
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("value");
    QTest::addColumn<double>("raw");
    QTest::addRow("lesson: threads") << "naive" << 5 << 784 << 10 << 16 << "threads"
                                     << "256" << 256.0;
    QTest::addRow("lesson: share inside C") << "naive" << 5 << 784 << 10 << 16 << "share inside C"
                                            << "19.5 %" << 50.0 / 256;
    QTest::addRow("lesson: grid") << "naive" << 5 << 784 << 10 << 16 << "grid"
                                  << "(1, 1, 1)" << 1.0;
    QTest::addRow("naive: 2K loads per output")
        << "naive" << 5 << 784 << 10 << 16 << "loads per output"
        << "1568.0" << 1568.0;
    QTest::addRow("naive: 1/4 FLOP per byte")
        << "naive" << 7 << 64 << 9 << 4 << "arithmetic intensity"
        << "0.248 FLOP/B" << 2.0 * 7 * 9 * 64 / (4.0 * (2 * 7 * 9 * 64 + 63));
    QTest::addRow("smem_tiled: 2K/TPB loads per output")
        << "smem_tiled" << 16 << 64 << 16 << 8 << "loads per output"
        << "16.0" << 16.0;
    QTest::addRow("smem_tiled 40x37x33 tpb8: idle threads")
        << "smem_tiled" << 40 << 37 << 33 << 8 << "idle threads"
        << "280" << 280.0;
    QTest::addRow("smem_tiled 40x37x33 tpb8: every thread stages tiles")
        << "smem_tiled" << 40 << 37 << 33 << 8 << "threads touching memory"
        << "1,600" << 1600.0;
    QTest::addRow("naive 40x37x33 tpb8: idle threads touch no memory")
        << "naive" << 40 << 37 << 33 << 8 << "threads touching memory"
        << "1,320" << 1320.0;
  }
  void statistics() {
    QFETCH(QString, kernel);
    QFETCH(int, m);
    QFETCH(int, k);
    QFETCH(int, n);
    QFETCH(int, tpb);
    QFETCH(QString, name);
    QFETCH(QString, value);
    QFETCH(double, raw);
    KernelStatsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setResult(simulateKernelLaunch({kernel, m, k, n, tpb, 3}, 0));
    const int row = model.rowOf(name);
    QVERIFY2(row >= 0, qPrintable(name));
    QCOMPARE(model.index(row, KernelStatsModel::Value).data().toString(), value);
    QCOMPARE(model.index(row, KernelStatsModel::Value).data(Qt::UserRole).toDouble(), raw);
    QVERIFY(!model.index(row, KernelStatsModel::Name).data(Qt::ToolTipRole).toString().isEmpty());
    QCOMPARE(model.headerData(KernelStatsModel::Value, Qt::Horizontal).toString(),
             QStringLiteral("Value"));
    for (const char* always :
         {"block", "bytes read", "simulation", "max_rel_err", "diagnostics", "trace"}) {
      QVERIFY2(model.rowOf(QLatin1String(always)) >= 0, always);
    }
    model.setResult(nullptr);
    QCOMPARE(model.rowCount(), 0);
  }

  void diagnostics_data() {
    QTest::addColumn<int>("column");
    QTest::addColumn<QString>("text");
    QTest::addRow("kind") << int(KernelDiagnosticsModel::Kind) << "shared_race";
    QTest::addRow("block") << int(KernelDiagnosticsModel::Block) << "(1, 0, 0)";
    QTest::addRow("thread") << int(KernelDiagnosticsModel::Thread) << "(3, 2, 0)";
    QTest::addRow("array") << int(KernelDiagnosticsModel::Array) << "As";
    QTest::addRow("index") << int(KernelDiagnosticsModel::Index) << "[2, 5]";
    QTest::addRow("message") << int(KernelDiagnosticsModel::Message) << "a race";
  }
  void diagnostics() {
    QFETCH(int, column);
    QFETCH(QString, text);
    // the registry's kernels are correct, so a diagnostic is added to a real launch's report
    auto result = std::make_shared<KernelLaunchResult>(
        *simulateKernelLaunch({"smem_tiled", 9, 9, 9, 4, 0}, 0));
    QVERIFY(result->run.report.diagnostics.empty());
    KernelDiagnosticsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setResult(result);
    QCOMPARE(model.rowCount(), 0);
    sim::Diagnostic d;
    d.kind = sim::DiagnosticKind::SharedRace;
    d.block = {1, 0, 0};
    d.thread = {3, 2, 0};
    d.array = "As";
    d.index = {2, 5};
    d.message = "a race";
    result->run.report.diagnostics.push_back(d);
    model.setResult(result);
    QCOMPARE(model.rowCount(), 1);
    QCOMPARE(model.columnCount(), int(KernelDiagnosticsModel::ColumnCount));
    QCOMPARE(model.index(0, column).data().toString(), text);
    QCOMPARE(model.index(0, 0).data(Qt::ToolTipRole).toString(), QStringLiteral("a race"));
  }
};

QTEST_GUILESS_MAIN(TestKernelStatsModel)
#include "test_kernel_stats_model.moc"
