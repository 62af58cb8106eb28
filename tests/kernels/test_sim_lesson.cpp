// The fast.ai lesson's launch at full size: naive, M=50000, K=784, N=10, TPB=16 gives the
// grid (3125, 1), 800000 threads of which 500000 pass the bounds check. One run; skipped in the
// sanitizer build, where it takes minutes.
#include <QtTest>

#include "kernels/registry.h"

using namespace matmulviz;

class TestSimLesson : public QObject {
  Q_OBJECT
 private slots:
  void naiveFullSize() {
    const kernels::KernelVariant* v = kernels::findKernel("naive");
    const kernels::MatmulProblem p{50000, 784, 10, 1, 1};
    const kernels::SimulatedRun run = kernels::runSimulated(*v, p, 16, 0, sim::LaunchOptions{});
    QCOMPARE(run.report.config.gridDim.x, 3125u);
    QCOMPARE(run.report.config.gridDim.y, 1u);
    QCOMPARE(run.report.config.gridDim.z, 1u);
    QCOMPARE(run.report.stats.threads, 800000ull);
    QCOMPARE(run.report.stats.activeThreads, 500000ull);
    QCOMPARE(run.report.stats.globalLoads, 2ull * 50000 * 10 * 784);
    QVERIFY2(run.maxRelErr < 1e-5, qPrintable(QString::number(run.maxRelErr)));
    QCOMPARE(run.report.diagnosticCounts.total(), 0ull);
  }
};

QTEST_GUILESS_MAIN(TestSimLesson)
#include "test_sim_lesson.moc"
