// The reduction kernel's staging buffers (core/memory/reduction_temporaries.h, after
// aten/src/ATen/native/cuda/Reduce.cuh): the launch setReduceConfig chooses and the two buffers a
// global reduce takes, and the engine's sum, mean and sumTo taking them at the moment PyTorch
// does. The two H200 figures are measured (tests/reference/gpu/snapshots, PyTorch 2.11 on an
// NVIDIA H200, 2026-11-28: mlp_backward's and gather_backward's `.sum()`); the other rows follow
// the rule, for shapes that take its other branches.
#include "core/memory/reduction_temporaries.h"
#include "core/ops/ops.h"
#include "core/ops/pointwise.h"
#include "core/tensor/tensor.h"

#include <QtTest>

#include <vector>

using namespace matmulviz;

namespace {

/// A contiguous input of `sizes` with the dims in `reduced` summed away.
std::vector<ReductionDim> contiguous(const std::vector<int64_t>& sizes,
                                     const std::vector<bool>& reduced) {
  std::vector<ReductionDim> dims(sizes.size());
  int64_t stride = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    dims[d] = {sizes[d], stride, reduced[d]};
    stride *= sizes[d];
  }
  return dims;
}

DevicePtr metaDevice(const char* gpu = "h200") {
  CachingAllocator::Options options;
  options.pytorch.gpu = gpu;
  return makeDevice(DeviceKind::Meta, options);
}

}  // namespace

class TestReductionTemporaries : public QObject {
  Q_OBJECT

 private slots:
  void config_data() {
    QTest::addColumn<QString>("gpu");
    QTest::addColumn<QList<qint64>>("sizes");
    QTest::addColumn<QList<bool>>("reduced");
    QTest::addColumn<bool>("fastest");
    QTest::addColumn<qint64>("ctas");
    QTest::addColumn<qint64>("buffer");
    QTest::addColumn<qint64>("semaphores");
    // Measured on the H200: 192,000 floats summed take 24 blocks (96 B), 262,144 take 32.
    QTest::newRow("gather_backward's sum, H200")
        << "h200" << QList<qint64>{3000, 1, 64} << QList<bool>{true, true, true} << true
        << qint64(24) << qint64(96) << qint64(4);
    QTest::newRow("mlp_backward's sum, H200")
        << "h200" << QList<qint64>{256, 1024} << QList<bool>{true, true} << true << qint64(32)
        << qint64(128) << qint64(4);
    // 64 values per thread: one block per output, no staging.
    QTest::newRow("attention_backward's sum, H200")
        << "h200" << QList<qint64>{512, 64} << QList<bool>{true, true} << true << qint64(1)
        << qint64(0) << qint64(0);
    // A big sum is capped by the GPU's resident blocks: 132 SMs x 4 blocks of 512 threads on
    // an H200, 40 x 2 on a T4.
    QTest::newRow("2^24 floats, H200") << "h200" << QList<qint64>{1 << 24} << QList<bool>{true}
                                       << true << qint64(528) << qint64(528 * 4) << qint64(4);
    QTest::newRow("2^24 floats, T4") << "t4" << QList<qint64>{1 << 24} << QList<bool>{true} << true
                                     << qint64(128) << qint64(128 * 4) << qint64(4);
    // Summing the rows of [8192, 64] (a bias gradient): not along the fastest dim, outputs
    // vectorised by 4, 16 x 8 threads; the staging buffer holds every lane's partial sums.
    QTest::newRow("bias gradient [8192, 64] over dim 0")
        << "h200" << QList<qint64>{8192, 64} << QList<bool>{true, false} << false << qint64(64)
        << qint64(4 * 64 * 64 * 16 * 4) << qint64(4);
    QTest::newRow("rows of [64, 8192]")
        << "h200" << QList<qint64>{64, 8192} << QList<bool>{false, true} << true << qint64(1)
        << qint64(0) << qint64(0);
  }
  void config() {
    QFETCH(QString, gpu);
    QFETCH(QList<qint64>, sizes);
    QFETCH(QList<bool>, reduced);
    QFETCH(bool, fastest);
    QFETCH(qint64, ctas);
    QFETCH(qint64, buffer);
    QFETCH(qint64, semaphores);
    const GpuArchitecture* arch = findGpuArchitecture(gpu.toStdString());
    QVERIFY(arch);
    const std::vector<int64_t> dimSizes(sizes.begin(), sizes.end());
    std::vector<bool> dimReduced;
    for (bool r : reduced) dimReduced.push_back(r);
    const ReductionConfig c = reductionConfig(contiguous(dimSizes, dimReduced), 4, 0, *arch);
    QCOMPARE(c.reductionOnFastestDim, fastest);
    QCOMPARE(qint64(c.ctasPerOutput), ctas);
    QCOMPARE(c.globalReduce, ctas > 1);
    QCOMPARE(qint64(c.bufferBytes), buffer);
    QCOMPARE(qint64(c.semaphoreBytes), semaphores);
  }

  void sizeOneDimsAndLayoutDoNotMatter() {
    const GpuArchitecture& h200 = *findGpuArchitecture("h200");
    const ReductionConfig flat = reductionConfig(contiguous({192000}, {true}), 4, 0, h200);
    const ReductionConfig shaped =
        reductionConfig(contiguous({3000, 1, 64}, {true, true, true}), 4, 0, h200);
    QCOMPARE(shaped.bufferBytes, flat.bufferBytes);
    // The same [256, 1024] summed over its rows, stored transposed: TensorIterator puts the
    // reduced dim first by the input's strides, so the launch is the row sum's.
    const std::vector<ReductionDim> transposed{{256, 1, true}, {1024, 256, false}};
    const ReductionConfig t = reductionConfig(transposed, 4, 0, h200);
    QVERIFY(t.reductionOnFastestDim);
  }

  void stepsAreBufferThenSemaphores() {
    const std::vector<TemporaryStep> steps = reductionTemporaries(
        contiguous({3000, 1, 64}, {true, true, true}), 4, 0, *findGpuArchitecture("h200"));
    QCOMPARE(steps.size(), size_t(2));
    QCOMPARE(steps[0].bytes, int64_t(96));
    QCOMPARE(steps[1].bytes, int64_t(4));
    QVERIFY(steps[0].freeStep < 0 && steps[1].freeStep < 0);  // freed last first, at the end
    QVERIFY(reductionTemporaries(contiguous({512, 64}, {true, true}), 4, 0,
                                 *findGpuArchitecture("h200"))
                .empty());
  }

  void sumOnDeviceRaisesThePeakOnly() {
    // The output (4 B, a 512-byte block), then 96 B and 4 B (a block each), freed again.
    const DevicePtr d = metaDevice();
    Tensor x = empty({3000, 1, 64}, DType::Float32, d, "x");
    d->allocator().resetPeak();
    const qint64 before = d->allocator().current().allocatedBytes;
    Tensor s = matmulviz::sum(x);
    QCOMPARE(d->allocator().current().allocatedBytes - before, 512);
    QCOMPARE(d->allocator().peak().allocatedBytes - before, 3 * 512);
  }

  void meanAndSumToTakeThemToo() {
    const DevicePtr d = metaDevice();
    Tensor x = empty({256, 1024}, DType::Float32, d, "x");
    d->allocator().resetPeak();
    const qint64 before = d->allocator().current().allocatedBytes;
    Tensor m = matmulviz::mean(x);
    QCOMPARE(d->allocator().peak().allocatedBytes - before, 3 * 512);
    Tensor y = empty({8192, 64}, DType::Float32, d, "y");
    d->allocator().resetPeak();
    const qint64 base = d->allocator().current().allocatedBytes;
    Tensor b = sumTo(y, {64});
    // the [64] result (256 B, a 512-byte block) and the 1 MiB staging buffer, then 4 B
    QCOMPARE(d->allocator().current().allocatedBytes - base, 512);
    QCOMPARE(d->allocator().peak().allocatedBytes - base, 512 + 1048576 + 512);
  }
};

QTEST_GUILESS_MAIN(TestReductionTemporaries)
#include "test_reduction_temporaries.moc"
