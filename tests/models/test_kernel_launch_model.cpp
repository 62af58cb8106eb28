// The Kernel view's model, GUI-free: launch shapes from the fast.ai lesson, the
// animation's steps per unit, narration read from the trace, following a thread, playback.
#include <QSignalSpy>
#include <QtTest>

#include "ui/models/kernel_launch_model.h"

using namespace matmulviz;
using namespace matmulviz::ui;

namespace {

std::shared_ptr<const KernelLaunchResult> run(const QString& kernel, int m, int k, int n, int tpb,
                                              std::uint64_t block = 0) {
  return simulateKernelLaunch({kernel, m, k, n, tpb, 1}, block);
}

}  // namespace

class TestKernelLaunchModel : public QObject {
  Q_OBJECT

 private slots:
  void launchShape_data() {
    QTest::addColumn<QString>("kernel");
    QTest::addColumn<int>("m");
    QTest::addColumn<int>("k");
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("tpb");
    QTest::addColumn<qlonglong>("gridX");
    QTest::addColumn<qlonglong>("gridY");
    QTest::addColumn<qulonglong>("threads");
    QTest::addColumn<qulonglong>("active");  // threads that touched global memory
    QTest::addRow("lesson 5x10 tpb16: one block, 50 of 256 active")
        << "naive" << 5 << 784 << 10 << 16 << 1ll << 1ll << 256ull << 50ull;
    QTest::addRow("coalesced 5x10")
        << "coalesced" << 5 << 784 << 10 << 16 << 1ll << 1ll << 256ull << 50ull;
    // every smem_tiled thread stages tiles, so all 1600 touch global memory (1320 inside C)
    QTest::addRow("smem_tiled 40x37x33 tpb8: x over columns")
        << "smem_tiled" << 40 << 37 << 33 << 8 << 5ll << 5ll << 1600ull << 1600ull;
#ifndef MATMULVIZ_SANITIZED_BUILD
    QTest::addRow("lesson 50000x10: grid (3125, 1)")
        << "naive" << 50000 << 4 << 10 << 16 << 3125ll << 1ll << 800000ull << 500000ull;
#endif
  }
  void launchShape() {
    QFETCH(QString, kernel);
    QFETCH(int, m);
    QFETCH(int, k);
    QFETCH(int, n);
    QFETCH(int, tpb);
    QFETCH(qlonglong, gridX);
    QFETCH(qlonglong, gridY);
    QFETCH(qulonglong, threads);
    QFETCH(qulonglong, active);
    const KernelGeometry g = KernelGeometry::of({kernel, m, k, n, tpb, 0});
    QCOMPARE(g.gridX, gridX);
    QCOMPARE(g.gridY, gridY);
    const auto r = run(kernel, m, k, n, tpb);
    QCOMPARE(qlonglong(r->run.report.config.gridDim.x), gridX);
    QCOMPARE(qlonglong(r->run.report.config.gridDim.y), gridY);
    QCOMPARE(qulonglong(r->run.report.stats.threads), threads);
    QCOMPARE(qulonglong(r->run.report.stats.activeThreads), active);
    QVERIFY(r->run.maxRelErr < 1e-5);
  }

  void geometry50000MapsCellsToBlocks() {
    const KernelGeometry g = KernelGeometry::of({"naive", 50000, 784, 10, 16, 0});
    QCOMPARE(g.gridX, 3125);
    QCOMPARE(g.planeCols(), 16);
    const KernelGeometry::BlockThread bt = g.at(49999, 9);  // x over rows
    QCOMPARE(bt.bx, 3124);
    QCOMPARE(bt.tx, 15);
    QCOMPARE(bt.ty, 9);
    QCOMPARE(g.rowOf(g.linearBlock(bt.bx, bt.by), bt.ty * 16 + bt.tx), 49999);
  }

  void stepCounts_data() {
    QTest::addColumn<QString>("kernel");
    QTest::addColumn<int>("m");
    QTest::addColumn<int>("k");
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("tpb");
    QTest::addColumn<qlonglong>("threadSteps");
    QTest::addColumn<qlonglong>("kSteps");
    QTest::addColumn<qlonglong>("phaseSteps");
    // naive: 256 threads, 50 run K k-steps and store, 206 exit idle; no barrier: one phase
    QTest::addRow("naive 5x784x10")
        << "naive" << 5 << 784 << 10 << 16 << 257ll << 1ll + 50 * 784 + 256 << 2ll;
    // smem_tiled: ceil(37/8) = 5 tiles, 2 barriers each: 11 phases; 64 threads in each phase
    QTest::addRow("smem_tiled 40x37x33 tpb8")
        << "smem_tiled" << 40 << 37 << 33 << 8 << 1ll + 64 * 11 << 1ll + 64 * (5 + 5 * 8 + 1)
        << 12ll;
    QTest::addRow("smem_tiled 3x16x5 tpb16: one tile")
        << "smem_tiled" << 3 << 16 << 5 << 16
        << 1ll + 256 * 3
        // the 15 threads inside C take the tile's 16 k-steps; the 241 past its edge compute
        // nothing and only stage the tile and pass both barriers
        << 1ll + 15 * (1 + 16 + 1) + 241 * 3 << 4ll;
  }
  void stepCounts() {
    QFETCH(QString, kernel);
    QFETCH(int, m);
    QFETCH(int, k);
    QFETCH(int, n);
    QFETCH(int, tpb);
    QFETCH(qlonglong, threadSteps);
    QFETCH(qlonglong, kSteps);
    QFETCH(qlonglong, phaseSteps);
    KernelLaunchModel model;
    model.setResult(run(kernel, m, k, n, tpb));
    model.setStepUnit(KernelStepUnit::Thread);
    QCOMPARE(model.stepCount(), threadSteps);
    model.setStepUnit(KernelStepUnit::KStep);
    QCOMPARE(model.stepCount(), kSteps);
    model.setStepUnit(KernelStepUnit::BarrierPhase);
    QCOMPARE(model.stepCount(), phaseSteps);
    model.seekToEnd();
    QCOMPARE(model.executed(), model.timeline().atomCount());
  }

  void tilePhases_data() {
    QTest::addColumn<int>("k");
    QTest::addColumn<int>("tpb");
    QTest::addColumn<int>("tiles");
    QTest::addRow("K 16 = TPB") << 16 << 16 << 1;
    QTest::addRow("K 17: a partial tile") << 17 << 16 << 2;
    QTest::addRow("K 37 tpb 8") << 37 << 8 << 5;
    QTest::addRow("lesson K 784 tpb 16") << 784 << 16 << 49;
  }
  void tilePhases() {
    QFETCH(int, k);
    QFETCH(int, tpb);
    QFETCH(int, tiles);
    const auto r = run("smem_tiled", 3, k, 5, tpb);
    QCOMPARE(r->geometry.tilePhases(), tiles);
    const KernelTimeline t(r);
    QCOMPARE(t.phaseCount(), 2 * tiles + 1);  // stage + compute per tile, then the store
    QCOMPARE(t.tileOfPhase(2 * tiles - 1), tiles - 1);
    QCOMPARE(t.tileOfPhase(2 * tiles), -1);
    QCOMPARE(t.droppedEvents(), 0ull);
  }

  void tilesFollowTheKernelsBarriers_data() {
    QTest::addColumn<QString>("kernel");
    QTest::addColumn<int>("barriersPerTile");
    QTest::addRow("smem_tiled: a barrier after staging and one after the products")
        << "smem_tiled" << 2;
    QTest::addRow("smem_tiled_no_sync: the second barrier removed") << "smem_tiled_no_sync" << 1;
  }
  void tilesFollowTheKernelsBarriers() {
    // The lesson's sizes with TPB 16: 49 tiles of K. The phase structure comes from the
    // kernel's registry entry, so tile 1 is A[0:5, 16:32] and B[16:32, 0:10] in both kernels.
    QFETCH(QString, kernel);
    QFETCH(int, barriersPerTile);
    const auto r = run(kernel, 5, 784, 10, 16);
    const KernelGeometry& g = r->geometry;
    QCOMPARE(g.barriersPerTile, barriersPerTile);
    QCOMPARE(g.barriersPerTile, kernels::findKernel(kernel.toStdString())->barriersPerTile);
    QCOMPARE(g.tilePhases(), 49);
    const KernelTimeline t(r);
    QCOMPARE(t.phaseCount(), barriersPerTile * 49 + 1);
    for (int tile : {0, 1, 48}) {
      QCOMPARE(g.tileStagedIn(g.stagePhase(tile)), tile);
      QCOMPARE(g.tileComputedIn(g.computePhase(tile)), tile);
      QCOMPARE(t.tileOfPhase(g.computePhase(tile)), tile);
      // what the Kernel view's caption reads: the rows and columns staged into As and Bs
      std::int32_t aCol0 = INT32_MAX, aCol1 = -1, bRow0 = INT32_MAX, bRow1 = -1;
      for (int i = 0; i < 16; ++i)
        for (int j = 0; j < 16; ++j) {
          const auto [ar, ac] = t.stagedSource(tile, false, i, j);
          const auto [br, bc] = t.stagedSource(tile, true, i, j);
          QVERIFY(ar != -2 && br != -2);  // traced
          if (ar >= 0) aCol0 = std::min(aCol0, ac), aCol1 = std::max(aCol1, ac);
          if (br >= 0) bRow0 = std::min(bRow0, br), bRow1 = std::max(bRow1, br);
        }
      QCOMPARE(aCol0, 16 * tile);
      QCOMPARE(aCol1 + 1, 16 * tile + 16);
      QCOMPARE(bRow0, 16 * tile);
      QCOMPARE(bRow1 + 1, 16 * tile + 16);
    }
    // a thread's products at tile 1 read k in 16..31, through As and Bs of that tile
    KernelLaunchModel model;
    model.setResult(r);
    QVERIFY(model.followCell(2, 3));
    int atTile1 = 0;
    for (const KernelProduct& p : model.followedProducts()) {
      const int tile = g.tileComputedIn(t.atoms()[std::size_t(p.atom)].phase);
      QVERIFY(p.k >= 16 * tile && p.k < 16 * tile + 16);
      QCOMPARE(p.aCol, p.k);
      QCOMPARE(p.bRow, p.k);
      atTile1 += tile == 1;
    }
    QCOMPARE(atTile1, 16);
    QVERIFY(t.narrate(model.followedProducts()[20].atom + 1).contains("tile 2 of 49"));
  }

  void narration_data() {
    QTest::addColumn<QString>("kernel");
    QTest::addColumn<int>("m");
    QTest::addColumn<int>("k");
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("tpb");
    QTest::addColumn<int>("row");
    QTest::addColumn<int>("col");
    // steps forward after following (which shows the thread's first atom); -1: to its first
    // multiply-add
    QTest::addColumn<int>("forward");
    QTest::addColumn<QString>("expected");
    QTest::addRow("lesson k-step") << "naive" << 5 << 784 << 10 << 16 << 3 << 7 << 12
                                   << "thread (3,7) of block (0,0): C[3,7] += A[3,12] * B[12,7], "
                                      "k = 12 of 784";
    QTest::addRow("lesson store") << "naive" << 5 << 784 << 10 << 16 << 3 << 7 << 784
                                  << "thread (3,7) of block (0,0): stores C[3,7] = ";
    QTest::addRow("lesson idle thread")
        << "naive" << 5 << 784 << 10 << 16 << 7 << 3 << 0
        << "thread (7,3) of block (0,0): (i, j) = (7, 3) is outside C [5 x 10], so the bounds "
           "check fails and the thread exits idle";
    QTest::addRow("coalesced: x over columns") << "coalesced" << 5 << 20 << 10 << 4 << 3 << 7 << 0
                                               << "thread (3,3) of block (1,0): C[3,7] += "
                                                  "A[3,0] * B[0,7], k = 0 of 20";
    QTest::addRow("smem_tiled stage")
        << "smem_tiled" << 40 << 37 << 33 << 8 << 2 << 3 << 0
        << "thread (3,2) of block (0,0) stages A[2,3] into As[2,3] and B[2,3] into Bs[2,3] "
           "(tile 1 of 5); then waits at __syncthreads() (barrier 1 of 10)";
    QTest::addRow("smem_tiled k-step through the tiles")
        << "smem_tiled" << 40 << 37 << 33 << 8 << 2 << 3 << -1
        << "thread (3,2) of block (0,0): C[2,3] += As[2,0] * Bs[0,3] (A[2,0] * B[0,3]), k = 0 of "
           "37, tile 1 of 5";
  }
  void narration() {
    QFETCH(QString, kernel);
    QFETCH(int, m);
    QFETCH(int, k);
    QFETCH(int, n);
    QFETCH(int, tpb);
    QFETCH(int, row);
    QFETCH(int, col);
    QFETCH(int, forward);
    QFETCH(QString, expected);
    KernelLaunchModel model;
    auto r = run(kernel, m, k, n, tpb);
    const std::uint64_t block = [&] {
      model.setResult(r);
      return model.blockOfCell(row, col);
    }();
    if (block != r->tracedBlock) model.setResult(run(kernel, m, k, n, tpb, block));
    QVERIFY(model.followCell(row, col));
    QSignalSpy narrated(&model, &KernelLaunchModel::narrationChanged);
    if (forward < 0) {
      const std::int64_t atom = model.followedProducts().front().atom;
      model.seek(model.timeline().stepAt(model.stepUnit(), atom + 1));
    }
    for (int i = 0; i < forward; ++i) model.stepForward();
    QVERIFY2(model.narration().startsWith(expected), qPrintable(model.narration()));
    QCOMPARE(narrated.size(), forward < 0 ? 1 : forward);
    if (!narrated.isEmpty()) QCOMPARE(narrated.last().at(0).toString(), model.narration());
  }

  void narrationAtStart() {
    KernelLaunchModel model;
    model.setResult(run("naive", 5, 784, 10, 16));
    QCOMPARE(model.currentStep(), 0);
    QVERIFY2(
        model.narration().contains("256 threads of 16 x 16, 50 inside C [5 x 10] and 206 idle"),
        qPrintable(model.narration()));
    model.seekToEnd();
    QVERIFY(model.narration().endsWith("Block done."));
  }

  void followedProductsComeFromTheTrace_data() {
    QTest::addColumn<QString>("kernel");
    QTest::addColumn<int>("k");
    QTest::addColumn<int>("tpb");
    QTest::addColumn<int>("count");  // multiply-adds the thread performed
    QTest::addRow("naive: K products") << "naive" << 37 << 8 << 37;
    QTest::addRow("smem_tiled: TPB per tile, padding included") << "smem_tiled" << 37 << 8 << 40;
  }
  void followedProductsComeFromTheTrace() {
    QFETCH(QString, kernel);
    QFETCH(int, k);
    QFETCH(int, tpb);
    QFETCH(int, count);
    KernelLaunchModel model;
    model.setResult(run(kernel, 6, k, 7, tpb));
    QVERIFY(model.followCell(2, 3));
    const std::vector<KernelProduct>& p = model.followedProducts();
    QCOMPARE(int(p.size()), count);
    for (int kk = 0; kk < count; ++kk) {
      QCOMPARE(p[std::size_t(kk)].k, kk);
      const bool inside = kk < k;
      QCOMPARE(p[std::size_t(kk)].aRow, inside ? 2 : -1);
      QCOMPARE(p[std::size_t(kk)].aCol, inside ? kk : -1);
      QCOMPARE(p[std::size_t(kk)].bRow, inside ? kk : -1);
      QCOMPARE(p[std::size_t(kk)].bCol, inside ? 3 : -1);
    }
    QVERIFY(model.followedProductsDone() <= 1);  // following shows the first atom
    model.seekToEnd();
    QCOMPARE(model.followedProductsDone(), std::size_t(count));
  }

  void followAnotherBlockNeedsItsTrace() {
    KernelLaunchModel model;
    model.setResult(run("naive", 40, 9, 20, 8));
    QVERIFY(!model.followCell(17, 12));  // block (2, 1) is not traced
    QVERIFY(!model.followedCell());
    const std::uint64_t block = model.blockOfCell(17, 12);
    QCOMPARE(block, 2u + 5u * 1u);
    model.setResult(run("naive", 40, 9, 20, 8, block));
    QVERIFY(model.followCell(17, 12));
    QCOMPARE(model.followedThread(), 4 * 8 + 1);  // threadIdx (1, 4)
    QVERIFY(model.narration().isEmpty() == false);
    QVERIFY(!model.followCell(100, 0));  // off the plane
  }

  void cappedTraceStopsTheAnimationWhereTheTraceStops_data() {
    QTest::addColumn<QString>("kernel");
    QTest::addColumn<int>("capEvents");
    QTest::addRow("naive, 101 events: inside a thread") << "naive" << 101;
    QTest::addRow("smem_tiled, 1000 events: inside a phase") << "smem_tiled" << 1000;
  }
  void cappedTraceStopsTheAnimationWhereTheTraceStops() {
    QFETCH(QString, kernel);
    QFETCH(int, capEvents);
    const auto r = simulateKernelLaunch(
        {kernel, 20, 30, 20, 8, 1}, 0, std::size_t(capEvents) * sizeof(matmulviz::sim::TraceEvent));
    QCOMPARE(int(r->run.report.trace.events().size()), capEvents);
    QVERIFY(r->run.report.trace.dropped() > 0);
    QVERIFY(r->run.maxRelErr < 1e-5);  // the launch itself is complete
    KernelLaunchModel model;
    model.setResult(r);
    QVERIFY(model.stepCount() > 1);
    model.seekToEnd();
    QVERIFY2(model.narration().contains(QStringLiteral("past its cap")),
             qPrintable(model.narration()));
    QVERIFY(model.timeline().atoms().back().endEvent <= std::uint32_t(capEvents));
  }

  void unitChangeKeepsThePosition() {
    KernelLaunchModel model;
    model.setResult(run("smem_tiled", 40, 37, 33, 8));
    model.seek(1000);  // k-steps
    const std::int64_t executed = model.executed();
    model.setStepUnit(KernelStepUnit::BarrierPhase);
    QVERIFY(model.executed() >= executed);
    model.setStepUnit(KernelStepUnit::Thread);
    QVERIFY(model.executed() >= executed);
    model.seek(-5);
    QCOMPARE(model.currentStep(), 0);
    model.seek(1 << 30);
    QCOMPARE(model.currentStep(), model.stepCount() - 1);
  }

  void playReachesTheEnd() {
    KernelLaunchModel model;
    model.setResult(run("naive", 5, 20, 10, 16));
    model.setSpeed(100000);
    QSignalSpy playing(&model, &KernelLaunchModel::playingChanged);
    model.play();
    QVERIFY(model.playing());
    QTRY_VERIFY(!model.playing());
    QCOMPARE(model.currentStep(), model.stepCount() - 1);
    QCOMPARE(playing.size(), 2);
  }

  void faultyKernelsKeepTheShapeTheyBreak_data() {
    QTest::addColumn<QString>("kernel");
    QTest::addColumn<bool>("xOverRows");
    QTest::addColumn<bool>("tiled");
    QTest::addRow("smem_tiled_no_sync") << "smem_tiled_no_sync" << false << true;
    QTest::addRow("naive_no_bounds_check") << "naive_no_bounds_check" << true << false;
    QTest::addRow("smem_tiled_divergent_barrier")
        << "smem_tiled_divergent_barrier" << false << true;
  }
  void faultyKernelsKeepTheShapeTheyBreak() {
    QFETCH(QString, kernel);
    QFETCH(bool, xOverRows);
    QFETCH(bool, tiled);
    QVERIFY(kernelViewKernels().indexOf(kernel) > kernelViewKernels().indexOf("smem_tiled"));
    QVERIFY(isFaultyKernel(kernel));
    QCOMPARE(kernelItemText(kernel), kernel + " (faulty, for teaching)");
    const KernelGeometry g = KernelGeometry::of({kernel, 17, 9, 11, 4, 0});
    QCOMPARE(g.xOverRows, xOverRows);
    QCOMPARE(g.tiled, tiled);
    // simulates, reports its fault, and the animation plays through its traced block
    const auto r = run(kernel, 17, 9, 11, 4);
    QVERIFY(r->run.report.diagnosticCounts.total() > 0);
    KernelLaunchModel model;
    model.setResult(r);
    QVERIFY(model.stepCount() > 1);
    model.seekToEnd();
    QCOMPARE(model.executed(), model.timeline().atomCount());
  }

  void correctKernelsAreNotFaulty() {
    QCOMPARE(kernelViewKernels().mid(0, 3), (QStringList{"naive", "coalesced", "smem_tiled"}));
    QCOMPARE(kernelViewKernels().size(), 6);
    QCOMPARE(batchedKernels(), QStringList{"gather_bmm"});  // listed, greyed out
    QVERIFY(batchedKernelNote("gather_bmm").contains("matmulviz-cli launch --kernel gather_bmm"));
    QVERIFY(!isFaultyKernel("smem_tiled"));
    QVERIFY(!isFaultyKernel("gather_bmm"));
    QCOMPARE(kernelItemText("naive"), QString("naive"));
  }

  void refusesBadLaunches_data() {
    QTest::addColumn<QString>("kernel");
    QTest::addColumn<int>("m");
    QTest::addColumn<int>("k");
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("tpb");
    QTest::addColumn<QString>("message");
    QTest::addRow("M 0") << "naive" << 0 << 5 << 5 << 16 << "M = 0: must be in 1..100000";
    QTest::addRow("TPB 33") << "naive" << 5 << 5 << 5 << 33 << "TPB = 33: must be in 1..32";
    QTest::addRow("gather_bmm") << "gather_bmm" << 5 << 5 << 5 << 16 << "kernel gather_bmm";
    QTest::addRow("unknown") << "fast" << 5 << 5 << 5 << 16 << "kernel fast";
    QTest::addRow("too many outputs") << "naive" << 100000 << 1 << 100000 << 16 << "M x N";
    QTest::addRow("minutes of simulation")
        << "naive" << 4096 << 4096 << 4096 << 16 << "M x N x K = ";
  }
  void refusesBadLaunches() {
    QFETCH(QString, kernel);
    QFETCH(int, m);
    QFETCH(int, k);
    QFETCH(int, n);
    QFETCH(int, tpb);
    QFETCH(QString, message);
    const KernelLaunchSpec spec{kernel, m, k, n, tpb, 0};
    QVERIFY2(checkKernelLaunch(spec).startsWith(message), qPrintable(checkKernelLaunch(spec)));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, simulateKernelLaunch(spec, 0));
  }
};

QTEST_GUILESS_MAIN(TestKernelLaunchModel)
#include "test_kernel_launch_model.moc"
