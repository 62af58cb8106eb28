// The cost model (core/costmodel): the formula, and the seed's strategies on an H100 profile,
// which the model must show launch-bound for strategy1/strategy2 and fast for the batched ones.
#include <QtTest>

#include <stdexcept>

#include "core/costmodel/cost_model.h"

using namespace matmulviz;

class TestCostModel : public QObject {
  Q_OBJECT
 private slots:
  void profiles() {
    QCOMPARE(QString::fromStdString(costmodel::gpuProfileKeys()), QString("h200|h100|a100|t4"));
    const costmodel::GpuProfile* h100 = costmodel::findGpuProfile("h100");
    QVERIFY(h100 != nullptr);
    QCOMPARE(h100->bandwidthBytesPerS, 3.0e12);
    QCOMPARE(h100->float32FlopsPerS, 67e12);
    QVERIFY(costmodel::findGpuProfile("v100") == nullptr);
  }

  void formula_data() {
    QTest::addColumn<qulonglong>("launches");
    QTest::addColumn<qulonglong>("bytes");
    QTest::addColumn<qulonglong>("flops");
    QTest::addColumn<double>("expectedS");
    QTest::addColumn<QString>("bound");
    // h100: 3e12 B/s, 67e12 FLOP/s, 4e-6 s per launch
    QTest::addRow("memory-bound copy 3 GB")
        << 1ull << 3000000000ull << 0ull << 1e-3 + 4e-6 << "memory";
    QTest::addRow("compute-bound 67 TFLOP")
        << 1ull << 0ull << 67000000000000ull << 1.0 + 4e-6 << "compute";
    QTest::addRow("launch-bound 1000 tiny")
        << 1000ull << 1000ull << 1000ull << 4e-3 + 1000 / 3e12 << "launch";
  }
  void formula() {
    QFETCH(qulonglong, launches);
    QFETCH(qulonglong, bytes);
    QFETCH(qulonglong, flops);
    QFETCH(double, expectedS);
    QFETCH(QString, bound);
    const costmodel::Prediction p = costmodel::predict(
        {launches, bytes / 2, bytes - bytes / 2, flops}, *costmodel::findGpuProfile("h100"));
    QVERIFY(qAbs(p.totalS - expectedS) < 1e-9 * qMax(1.0, expectedS));
    QCOMPARE(QString::fromUtf8(p.bound.data(), qsizetype(p.bound.size())), bound);
  }

  void seedStrategies_data() {
    QTest::addColumn<QString>("strategy");
    QTest::addColumn<qulonglong>("launches");
    QTest::addColumn<double>("atLeastS");
    QTest::addColumn<double>("atMostS");
    // N = 131072 items, batch 256: strategy1 = q copy + gather + N matmuls + cat
    QTest::addRow("strategy1") << "strategy1" << qulonglong(2 + 131072 + 1) << 0.4 << 1.0;
    QTest::addRow("strategy2") << "strategy2" << qulonglong(131072 + 1) << 0.4 << 1.0;
    QTest::addRow("strategy3") << "strategy3" << qulonglong(512 * 3 + 1) << 0.001 << 0.02;
    QTest::addRow("direct") << "direct" << 3ull << 0.0005 << 0.005;
    QTest::addRow("fused") << "fused" << 2ull << 0.0001 << 0.005;
  }
  void seedStrategies() {
    QFETCH(QString, strategy);
    QFETCH(qulonglong, launches);
    QFETCH(double, atLeastS);
    QFETCH(double, atMostS);
    const costmodel::WorkCounts w = costmodel::strategyCounts(strategy.toStdString(), {});
    QCOMPARE(qulonglong(w.launches), launches);
    const costmodel::Prediction p = costmodel::predict(w, *costmodel::findGpuProfile("h100"));
    QVERIFY2(p.totalS >= atLeastS && p.totalS <= atMostS, qPrintable(QString::number(p.totalS)));
    QCOMPARE(qulonglong(w.flops), 2ull * 131072 * 64 * 64);
  }

  void unknownStrategy() {
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, costmodel::strategyCounts("strategy4", {}));
  }
};

QTEST_GUILESS_MAIN(TestCostModel)
#include "test_cost_model.moc"
