// The seed's full-size table once on the cpu device, with real data and real arithmetic
// (the meta-device suites check the same numbers fast). Built in the release preset only: it
// moves about 2 GiB per strategy.
#include "core/strategies/runner.h"

#include <QtTest>

using namespace matmulviz;

class TestSeedTableCpu : public QObject {
  Q_OBJECT

 private slots:
  void table_data() {
    QTest::addColumn<bool>("gradA");
    QTest::addColumn<QList<qint64>>("expected");  // cur, max per strategy, in MiB
    QTest::newRow("a does not require grad")
        << false << QList<qint64>{96, 2208, 96, 160, 96, 128, 96, 2144, 96, 97};
    QTest::newRow("a requires grad")
        << true << QList<qint64>{2144, 2208, 96, 160, 2144, 2176, 2144, 2144, 96, 97};
  }
  void table() {
    QFETCH(bool, gradA);
    QFETCH(QList<qint64>, expected);
    RunConfig c;                      // the seed's workload and all five strategies
    c.pytorch = forumPyTorchModel();  // the post's PyTorch: no cuBLAS workspace counted
    c.repeats = 1;
    c.requiresGrad.a = gradA;
    c.requiresGrad.c = true;  // as in the seed: c.requires_grad_()
    StrategyRunner runner(c, makeRandomInputs(c.workload, 0));
    const auto report = runner.run();
    QCOMPARE(report.runs.size(), size_t(5));
    for (size_t s = 0; s < report.runs.size(); ++s) {
      const StrategyRun& r = report.runs[s];
      QVERIFY2(r.ok, r.error.c_str());
      QCOMPARE(qint64(toMiBFloor(r.current.allocatedBytes)), expected[int(2 * s)]);
      QCOMPARE(qint64(toMiBFloor(r.peak.allocatedBytes)), expected[int(2 * s + 1)]);
      QVERIFY2(r.maxRelErr < 1e-5, r.strategy.c_str());
    }
  }
};

QTEST_GUILESS_MAIN(TestSeedTableCpu)
#include "test_seed_table_cpu.moc"
