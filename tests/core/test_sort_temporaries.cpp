// CUB's temporary storage as PyTorch's kernels ask for it. The sort inside index_put_ with
// accumulate=True (core/memory/sort_temporaries.h, after PyTorch's index_put_with_sort_kernel and
// CUB 3.0's DeviceRadixSort): get_num_bits, the storage for each branch of its dispatch, the op's
// steps, and the engine's backward of t[q] taking them; and the tiles of topk's scan by key
// (core/memory/kernel_temporaries.h). The 53759 bytes are measured
// (tests/reference/gpu/snapshots/gather_backward.pickle, PyTorch 2.11 on an NVIDIA H200,
// 2026-11-28: 3000 indices into c [1000, 64, 64]); the other rows follow the rule for the other
// policies and branches.
#include "core/memory/kernel_temporaries.h"
#include "core/memory/sort_temporaries.h"
#include "core/ops/ops.h"
#include "core/tensor/tensor.h"

#include <QtTest>

using namespace matmulviz;

namespace {

const GpuArchitecture& arch(const char* key) {
  return *findGpuArchitecture(key);
}

}  // namespace

class TestSortTemporaries : public QObject {
  Q_OBJECT

 private slots:
  void keyBits() {
    QCOMPARE(cubKeyBits(0), 1);
    QCOMPARE(cubKeyBits(1), 1);
    QCOMPARE(cubKeyBits(2), 2);
    QCOMPARE(cubKeyBits(255), 8);
    QCOMPARE(cubKeyBits(256), 9);
    QCOMPARE(cubKeyBits(999), 10);
  }

  void tempBytes_data() {
    QTest::addColumn<qint64>("items");
    QTest::addColumn<int>("bits");
    QTest::addColumn<QString>("gpu");
    QTest::addColumn<qint64>("bytes");
    // one tile of the single-tile policy (256 x 9 items for 8-byte pairs): CUB asks for 1 byte
    QTest::newRow("single tile") << qint64(2304) << 10 << "h200" << qint64(1);
    // measured on the H200: 2 passes, 1 onesweep tile, a third key and value buffer
    QTest::newRow("H200, 3000 x 10 bits")
        << qint64(3000) << 10 << "h200" << qint64(4096 + 1024 + 24064 + 24064 + 256 + 255);
    // one pass needs no third buffers
    QTest::newRow("one pass") << qint64(3000) << 8 << "h200" << qint64(2048 + 1024 + 256 + 255);
    // sm_90's onesweep tile is 384 x 12 = 4608 items: the 4609th item takes a second look-back
    QTest::newRow("sm_90, two tiles")
        << qint64(4609) << 8 << "h100" << qint64(2048 + 2048 + 256 + 255);
    // sm_80's tile is 384 x 10 = 3840, sm_75's (Policy700) 256 x 11 = 2816
    QTest::newRow("sm_80, two tiles")
        << qint64(3841) << 8 << "a100" << qint64(2048 + 2048 + 256 + 255);
    QTest::newRow("sm_75, two tiles")
        << qint64(2817) << 8 << "t4" << qint64(2048 + 2048 + 256 + 255);
  }
  void tempBytes() {
    QFETCH(qint64, items);
    QFETCH(int, bits);
    QFETCH(QString, gpu);
    QFETCH(qint64, bytes);
    QCOMPARE(qint64(cubRadixSortPairsTempBytes(items, bits, arch(gpu.toLatin1().constData()))),
             bytes);
  }

  void scanByKeyTiles_data() {
    QTest::addColumn<qint64>("items");
    QTest::addColumn<QString>("gpu");
    QTest::addColumn<qint64>("bytes");
    // up to 16 tiles the tile state rounds to 768 bytes; the 17th tile makes it 1024
    QTest::newRow("sm_90, 16 tiles") << qint64(16 * 4032) << "h200" << qint64(768 + 256 + 255);
    QTest::newRow("sm_90, 17 tiles") << qint64(16 * 4032 + 1) << "h200" << qint64(1535);
    QTest::newRow("sm_80, 17 tiles") << qint64(16 * 3840 + 1) << "a100" << qint64(1535);
    QTest::newRow("sm_75, 16 tiles") << qint64(16 * 2304) << "t4" << qint64(1279);
    QTest::newRow("sm_75, 17 tiles") << qint64(16 * 2304 + 1) << "t4" << qint64(1535);
  }
  void scanByKeyTiles() {
    QFETCH(qint64, items);
    QFETCH(QString, gpu);
    QFETCH(qint64, bytes);
    QCOMPARE(qint64(cubScanByKeyTempBytes(items, arch(gpu.toLatin1().constData()))), bytes);
  }

  void stepsOfAHostIndex() {
    const auto steps = indexPutSortTemporaries(3000, 999, false, arch("h200"));
    QCOMPARE(steps.size(), size_t(5));
    for (int i = 0; i < 3; ++i) QCOMPARE(steps[size_t(i)].bytes, int64_t(24000));
    QCOMPARE(steps[3].bytes, int64_t(53759));
    QCOMPARE(steps[4].freeStep, 3);  // the sort's storage goes first; the rest as the op returns
  }

  void stepsOfADeviceIndex() {
    const auto steps = indexPutSortTemporaries(3000, 999, true, arch("h200"));
    QCOMPARE(steps.size(), size_t(8));
    QCOMPARE(steps[0].bytes, int64_t(24000));  // index.remainder(size)
    QCOMPARE(steps[1].bytes, int64_t(24000));  // the linear index, kept to the end
    QCOMPARE(steps[2].freeStep, 0);
    QCOMPARE(steps[6].bytes, int64_t(53759));
    QCOMPARE(steps[7].freeStep, 6);
    QVERIFY(indexPutSortTemporaries(0, 999, true, arch("h200")).empty());
  }

  void backwardOfAGatherTakesThem() {
    CachingAllocator::Options options;
    DevicePtr d = makeDevice(DeviceKind::Meta, options);
    Tensor c = empty({1000, 64, 64}, DType::Float32, d, "c");
    c.setRequiresGrad(true);
    Tensor q = zeros({3000}, DType::Int64, nullptr, "q");  // a host index
    Tensor g = index(c, q);
    Tensor grad = empty(g.sizes(), DType::Float32, d, "grad of c[q]");
    d->allocator().resetPeak();
    const qint64 before = d->allocator().current().allocatedBytes;
    g.backward(grad);
    // grad of c (15.6 MiB) stays; at the sort's height: the index's device copy, three index
    // buffers (24000 B each, 24064 as blocks) and CUB's storage (53759 B, 54272 as a block)
    const qint64 peak = d->allocator().peak().allocatedBytes - before;
    QVERIFY2(peak >= 1000 * 64 * 64 * 4 + 4 * 24064 + 54272, qPrintable(QString::number(peak)));
  }
};

QTEST_GUILESS_MAIN(TestSortTemporaries)
#include "test_sort_temporaries.moc"
