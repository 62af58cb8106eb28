// The speed ladder (kernels/ladder.h) at small sizes: every rung that runs agrees with the
// float64 product, the speed-ups follow from the times, GPU rungs without a device are skipped
// with the reason, the cancel flag stops it and bad sizes throw. No timed assertions.
#include <QtTest>

#include <atomic>
#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/ladder.h"

using namespace matmulviz;

class TestLadder : public QObject {
  Q_OBJECT
 private slots:
  void rungsAgree_data() {
    QTest::addColumn<int>("M");
    QTest::addColumn<int>("K");
    QTest::addColumn<int>("N");
    QTest::addColumn<int>("tpb");
    QTest::addRow("odd 17x33x19 tpb8") << 17 << 33 << 19 << 8;
    QTest::addRow("lesson 5x784x10 tpb16") << 5 << 784 << 10 << 16;
    QTest::addRow("1x1x1 tpb1") << 1 << 1 << 1 << 1;
  }
  void rungsAgree() {
    QFETCH(int, M);
    QFETCH(int, K);
    QFETCH(int, N);
    QFETCH(int, tpb);
    kernels::LadderOptions o;
    o.M = M;
    o.K = K;
    o.N = N;
    o.tpb = tpb;
    o.repeats = 1;
    std::size_t calls = 0;
    const kernels::LadderReport r =
        kernels::runLadder(o, [&](std::size_t i, std::size_t count, const kernels::LadderRung&) {
          QCOMPARE(i, calls);
          QCOMPARE(count, std::size_t(8));
          ++calls;
        });
    QCOMPARE(calls, r.rungs.size());
    const char* names[] = {"simulated",  "loop",           "einsum",          "blas",
                           "cuda_naive", "cuda_coalesced", "cuda_smem_tiled", "cublas"};
    QCOMPARE(r.rungs.size(), std::size(names));
    double previous = 0;
    for (std::size_t i = 0; i < r.rungs.size(); ++i) {
      const kernels::LadderRung& g = r.rungs[i];
      QCOMPARE(QString::fromStdString(g.name), QString(names[i]));
      QVERIFY(!g.what.empty());
      if (!g.ok) {
        // only the GPU rungs may be skipped, and then with the reason
        QVERIFY2(i >= 4, g.skipped.c_str());
        QVERIFY(!g.skipped.empty());
        QCOMPARE(g.skipped, r.gpu);
        continue;
      }
      QVERIFY2(g.maxRelErr < 1e-5, (g.name + " " + std::to_string(g.maxRelErr)).c_str());
      QVERIFY(g.seconds > 0);
      QVERIFY(std::abs(g.gflops - kernels::ladderFlops(o) / g.seconds / 1e9) <= 1e-9 * g.gflops);
      if (previous == 0) {
        QCOMPARE(g.speedup, 0.0);  // the first rung has none below it
      } else {
        QVERIFY(std::abs(g.speedup - previous / g.seconds) <= 1e-12 * g.speedup);
      }
      previous = g.seconds;
    }
    QVERIFY(r.rungs[0].ok && r.rungs[1].ok && r.rungs[2].ok && r.rungs[3].ok);
  }

  void cancelSkipsTheRest() {
    kernels::LadderOptions o;
    o.M = 9;
    o.K = 7;
    o.N = 5;
    o.tpb = 4;
    o.repeats = 2;
    std::atomic<bool> cancel{false};
    const kernels::LadderReport r = kernels::runLadder(
        o,
        [&](std::size_t i, std::size_t, const kernels::LadderRung&) {
          if (i == 1) cancel = true;  // after the loop rung
        },
        &cancel);
    QVERIFY(r.rungs[0].ok);
    QVERIFY(r.rungs[1].ok);
    for (std::size_t i = 2; i < r.rungs.size(); ++i) {
      QVERIFY(!r.rungs[i].ok);
      QCOMPARE(QString::fromStdString(r.rungs[i].skipped), QString("cancelled"));
    }
  }

  void badOptionsThrow_data() {
    QTest::addColumn<int>("M");
    QTest::addColumn<int>("tpb");
    QTest::addColumn<int>("repeats");
    QTest::addRow("M 0") << 0 << 16 << 1;
    QTest::addRow("tpb 0") << 5 << 0 << 1;
    QTest::addRow("tpb 33") << 5 << 33 << 1;
    QTest::addRow("repeats 0") << 5 << 16 << 0;
  }
  void badOptionsThrow() {
    QFETCH(int, M);
    QFETCH(int, tpb);
    QFETCH(int, repeats);
    kernels::LadderOptions o;
    o.M = M;
    o.K = 3;
    o.N = 2;
    o.tpb = tpb;
    o.repeats = repeats;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, kernels::runLadder(o));
  }
};

QTEST_GUILESS_MAIN(TestLadder)
#include "test_ladder.moc"
