// The same kernel bodies on a real GPU against the simulator's result on the same inputs, and
// cuBLAS (sgemm, strided batched over c[q], gemmBatchedEx over pointers from q) against the
// float64 reference. Label gpu: every case skips with the probe's reason when no device answers.
#include <QtTest>

#include <algorithm>
#include <cmath>

#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/cuda_probe.h"
#include "kernels/cuda/cuda_segment_backing.h"
#include "kernels/registry.h"

using namespace matmulviz;

namespace {

/// max|a - b| / max|b|
double relDiff(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0;
  double scale = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    diff = std::max(diff, std::abs(double(a[i]) - double(b[i])));
    scale = std::max(scale, std::abs(double(b[i])));
  }
  return scale > 0 ? diff / scale : diff;
}

}  // namespace

class TestCudaKernels : public QObject {
  Q_OBJECT
 private:
  kernels::CudaStatus status_;

 private slots:
  void initTestCase() { status_ = kernels::probeCuda(); }

  void probeSaysWhy() {
    // with or without a device, the probe explains itself
    QVERIFY(status_.available || !status_.reason.empty());
    if (!status_.available) qInfo("CUDA unavailable: %s", status_.reason.c_str());
  }

  void kernelMatchesSimulator_data() {
    QTest::addColumn<QString>("kernel");
    QTest::addColumn<qlonglong>("M");
    QTest::addColumn<qlonglong>("K");
    QTest::addColumn<qlonglong>("N");
    QTest::addColumn<int>("tpb");
    // grouped_bmm: every timed launch re-zeroes its buckets, so the repeats agree
    for (const char* k : {"naive", "coalesced", "smem_tiled", "gather_bmm", "grouped_bmm"}) {
      QTest::addRow("%s 5x784x10 tpb16", k) << QString(k) << 5ll << 784ll << 10ll << 16;
      QTest::addRow("%s 37x45x29 tpb8", k) << QString(k) << 37ll << 45ll << 29ll << 8;
      QTest::addRow("%s 65x33x70 tpb32", k) << QString(k) << 65ll << 33ll << 70ll << 32;
    }
  }
  void kernelMatchesSimulator() {
    if (!status_.available)
      QSKIP(qPrintable("no CUDA device: " + QString::fromStdString(status_.reason)));
    QFETCH(QString, kernel);
    QFETCH(qlonglong, M);
    QFETCH(qlonglong, K);
    QFETCH(qlonglong, N);
    QFETCH(int, tpb);
    const kernels::KernelVariant* v = kernels::findKernel(kernel.toStdString());
    const kernels::MatmulProblem p{M, K, N, 6, 4};
    const kernels::MatmulInputs in = kernels::makeInputs(p, v->gathered, 11);
    std::vector<float> simulated(std::size_t(kernels::outputElements(p, v->gathered)));
    const sim::LaunchReport report = v->simulate(p, tpb, in, simulated.data(), {});
    QCOMPARE(report.diagnosticCounts.total(), 0ull);
    const kernels::cuda::CudaRun gpu = kernels::cuda::runKernel(v->name, p, tpb, in, 3);
    QCOMPARE(gpu.out.size(), simulated.size());
    // the GPU fuses a * b + acc (one rounding), the host rounds twice: close, not equal
    QVERIFY2(relDiff(gpu.out, simulated) < 1e-5,
             qPrintable(QString::number(relDiff(gpu.out, simulated))));
    QVERIFY(gpu.medianMs > 0);
  }

  void cublasMatchesReference_data() {
    QTest::addColumn<int>("mode");
    QTest::addColumn<qlonglong>("batch");
    QTest::addRow("gemm 37x45x29") << int(kernels::cuda::CublasMode::Gemm) << 1ll;
    QTest::addRow("strided batched over c[q]")
        << int(kernels::cuda::CublasMode::StridedBatched) << 9ll;
    QTest::addRow("gemmBatchedEx over q") << int(kernels::cuda::CublasMode::GatherPointers) << 9ll;
  }
  void cublasMatchesReference() {
    if (!status_.available)
      QSKIP(qPrintable("no CUDA device: " + QString::fromStdString(status_.reason)));
    QFETCH(int, mode);
    QFETCH(qlonglong, batch);
    const auto m = static_cast<kernels::cuda::CublasMode>(mode);
    const bool gathered = m != kernels::cuda::CublasMode::Gemm;
    const kernels::MatmulProblem p{37, 45, 29, batch, 5};
    const kernels::MatmulInputs in = kernels::makeInputs(p, gathered, 5);
    const kernels::cuda::CudaRun run = kernels::cuda::runCublas(p, m, in, 3);
    QVERIFY(kernels::maxRelErr(run.out.data(), kernels::referenceMatmul(p, gathered, in)) < 1e-5);
  }

  void qOutOfRangeRejected() {
    if (!status_.available)
      QSKIP(qPrintable("no CUDA device: " + QString::fromStdString(status_.reason)));
    const kernels::MatmulProblem p{3, 4, 5, 2, 2};
    kernels::MatmulInputs in = kernels::makeInputs(p, true, 1);
    in.q[1] = 7;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             kernels::cuda::runKernel("gather_bmm", p, 4, in, 1));
  }

  void segmentBacking() {
    if (!status_.available)
      QSKIP(qPrintable("no CUDA device: " + QString::fromStdString(status_.reason)));
    kernels::cuda::CudaSegmentBacking backing;
    QVERIFY(backing.hasData());
    QVERIFY(backing.isCudaDevice());
    void* p = backing.allocate(2 << 20);
    QVERIFY(p != nullptr);
    backing.release(p, 2 << 20);
    QCOMPARE(backing.releaseFailures(), std::size_t(0));
    // far more than any device has: a std::bad_alloc, not a crash
    QVERIFY_THROWS_EXCEPTION(std::bad_alloc, backing.allocate(std::size_t(1) << 50));
  }

  void unavailableThrowsWithReason() {
    if (status_.available) QSKIP("a CUDA device answers");
    const kernels::MatmulProblem p{3, 4, 5, 1, 1};
    const kernels::MatmulInputs in = kernels::makeInputs(p, false, 1);
    try {
      kernels::cuda::runKernel("naive", p, 4, in, 1);
      QFAIL("no exception");
    } catch (const std::exception& e) {
      QVERIFY(std::string(e.what()).size() > 10);
    }
  }
};

QTEST_GUILESS_MAIN(TestCudaKernels)
#include "test_cuda_kernels.moc"
