// Launch shapes of the kernel variants and CUDA's limits (core/sim/launch_config.h).
#include <QtTest>

#include <stdexcept>

#include "core/sim/launch_config.h"
#include "kernels/01_naive.h"
#include "kernels/02_coalesced.h"
#include "kernels/03_smem_tiled.h"
#include "kernels/04_gather_bmm.h"

using namespace matmulviz;

class TestLaunchConfig : public QObject {
  Q_OBJECT
 private slots:
  void naiveGrid_data() {
    QTest::addColumn<int>("M");
    QTest::addColumn<int>("N");
    QTest::addColumn<int>("tpb");
    QTest::addColumn<unsigned>("gx");
    QTest::addColumn<unsigned>("gy");
    QTest::addColumn<qulonglong>("threads");
    // The fast.ai lesson: blockspergrid = (ceil(50000/16), ceil(10/16)) = (3125, 1)
    QTest::addRow("lesson 50000x10 tpb16") << 50000 << 10 << 16 << 3125u << 1u << 800000ull;
    QTest::addRow("lesson 5x10 tpb16") << 5 << 10 << 16 << 1u << 1u << 256ull;
    QTest::addRow("odd 17x19 tpb8") << 17 << 19 << 8 << 3u << 3u << 576ull;
    QTest::addRow("1x1 tpb1") << 1 << 1 << 1 << 1u << 1u << 1ull;
    QTest::addRow("33x31 tpb32") << 33 << 31 << 32 << 2u << 1u << 2048ull;
  }
  void naiveGrid() {
    QFETCH(int, M);
    QFETCH(int, N);
    QFETCH(int, tpb);
    QFETCH(unsigned, gx);
    QFETCH(unsigned, gy);
    QFETCH(qulonglong, threads);
    const sim::LaunchConfig naive = kernels::naiveConfig(M, N, tpb);
    QCOMPARE(naive.gridDim.x, gx);
    QCOMPARE(naive.gridDim.y, gy);
    QCOMPARE(naive.gridDim.z, 1u);
    QCOMPARE(naive.blockDim.x, unsigned(tpb));
    QCOMPARE(naive.blockDim.y, unsigned(tpb));
    QCOMPARE(qulonglong(naive.threads()), threads);
    // coalesced and smem_tiled put x over columns: the grid is transposed
    const sim::LaunchConfig coalesced = kernels::coalescedConfig(M, N, tpb);
    QCOMPARE(coalesced.gridDim.x, gy);
    QCOMPARE(coalesced.gridDim.y, gx);
    const sim::LaunchConfig tiled = kernels::smemTiledConfig(M, N, tpb);
    QCOMPARE(tiled.gridDim.x, gy);
    QCOMPARE(tiled.sharedBytes, std::size_t(2 * tpb * tpb * 4));
  }

  void gatherGrid() {
    // the seed's fused workload: N = 131072 items of I = 1 row, K = 64 columns
    const sim::LaunchConfig config = kernels::gatherBmmConfig(131072, 1, 64, 16);
    QCOMPARE(config.gridDim.x, 4u);
    QCOMPARE(config.gridDim.y, 8192u);
  }

  void badLaunch_data() {
    QTest::addColumn<int>("M");
    QTest::addColumn<int>("N");
    QTest::addColumn<int>("tpb");
    QTest::addColumn<QString>("mentions");
    QTest::addRow("tpb 0") << 5 << 10 << 0 << "tpb = 0";
    QTest::addRow("tpb 33 (1089 threads)") << 5 << 10 << 33 << "tpb = 33";
    QTest::addRow("tpb -1") << 5 << 10 << -1 << "tpb = -1";
    QTest::addRow("M 0") << 0 << 10 << 16 << "at least 1";
    // coalesced: gridDim.y = ceil(M / 1) = 70000 > 65535
    QTest::addRow("gridDim.y 70000") << 70000 << 10 << 1 << "gridDim.y = 70000";
  }
  void badLaunch() {
    QFETCH(int, M);
    QFETCH(int, N);
    QFETCH(int, tpb);
    QFETCH(QString, mentions);
    try {
      kernels::coalescedConfig(M, N, tpb);
      QFAIL("no exception");
    } catch (const std::invalid_argument& e) {
      QVERIFY2(QString(e.what()).contains(mentions), e.what());
    }
  }

  void limits_data() {
    QTest::addColumn<unsigned>("bx");
    QTest::addColumn<unsigned>("by");
    QTest::addColumn<unsigned>("bz");
    QTest::addColumn<qulonglong>("sharedBytes");
    QTest::addColumn<QString>("mentions");
    QTest::addRow("blockDim.z 65") << 1u << 1u << 65u << 0ull << "blockDim.z";
    QTest::addRow("1025 threads") << 1025u << 1u << 1u << 0ull << "blockDim.x";
    QTest::addRow("32x33 threads") << 32u << 33u << 1u << 0ull << "1056 threads";
    QTest::addRow("shared 48 KiB + 1") << 1u << 1u << 1u << 49153ull << "shared memory";
  }
  void limits() {
    QFETCH(unsigned, bx);
    QFETCH(unsigned, by);
    QFETCH(unsigned, bz);
    QFETCH(qulonglong, sharedBytes);
    QFETCH(QString, mentions);
    sim::LaunchConfig config;
    config.blockDim = sim::Dim3{bx, by, bz};
    config.sharedBytes = sharedBytes;
    try {
      sim::validate(config);
      QFAIL("no exception");
    } catch (const std::invalid_argument& e) {
      QVERIFY2(QString(e.what()).contains(mentions), e.what());
    }
  }
};

QTEST_GUILESS_MAIN(TestLaunchConfig)
#include "test_launch_config.moc"
