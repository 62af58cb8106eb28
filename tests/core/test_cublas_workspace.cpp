// The cuBLAS workspace and kernel temporaries of PyTorch 2.x (core/memory/cublas_workspace.h,
// core/memory/kernel_temporaries.h): sizes from CublasHandlePool.cpp and TensorTopK.cu, and the
// engine's ops taking them at the moments PyTorch does (checked against an H200 in
// tests/python/test_gpu_memcases.py).
#include "core/memory/cublas_workspace.h"
#include "core/memory/kernel_temporaries.h"
#include "core/ops/ops.h"
#include "core/ops/pointwise.h"
#include "core/tensor/tensor.h"

#include <QtTest>

#include <optional>

using namespace matmulviz;

namespace {

constexpr qint64 MiB = 1024 * 1024;

DevicePtr metaDevice(PyTorchVersion version, const char* gpu = "h200",
                     std::optional<std::string> config = std::nullopt) {
  CachingAllocator::Options options;
  options.pytorch.version = version;
  options.pytorch.gpu = gpu;
  options.pytorch.cublasWorkspaceConfig = std::move(config);
  return makeDevice(DeviceKind::Meta, options);
}

qint64 workspaceBytes(const CachingAllocator& a) {
  qint64 total = 0;
  for (const AllocationRecord* r : a.liveRecords())
    if (r->category == MemoryCategory::CublasWorkspace) total += r->blockBytes;
  return total;
}

}  // namespace

class TestCublasWorkspace : public QObject {
  Q_OBJECT

 private slots:
  void size_data() {
    QTest::addColumn<int>("cc");
    QTest::addColumn<QString>("config");  // "-": unset
    QTest::addColumn<qint64>("bytes");
    QTest::newRow("sm_90 default: :4096:8") << 90 << "-" << 32 * MiB;
    QTest::newRow("sm_80 default: :4096:2:16:8") << 80 << "-" << 4096 * 1024 * 2 + 16 * 1024 * 8LL;
    QTest::newRow("sm_75 default") << 75 << "-" << 8519680LL;
    QTest::newRow(":0:0 is none") << 90 << ":0:0" << 0LL;
    QTest::newRow(":4096:8 on sm_80") << 80 << ":4096:8" << 32 * MiB;
    QTest::newRow("two pairs summed") << 90 << ":4096:2:16:8" << 8519680LL;
    QTest::newRow("no pair: the default") << 90 << "garbage" << 32 * MiB;
    QTest::newRow("odd sizes") << 75 << ":3:5" << 3 * 1024 * 5LL;
  }
  void size() {
    QFETCH(int, cc);
    QFETCH(QString, config);
    QFETCH(qint64, bytes);
    const std::string text = config.toStdString();
    QCOMPARE(cublasWorkspaceBytes(
                 cc, config == "-" ? std::nullopt : std::optional<std::string_view>(text)),
             bytes);
  }

  void perThread_data() {
    QTest::addColumn<QString>("version");
    QTest::addColumn<QString>("gpu");
    QTest::addColumn<QString>("config");
    QTest::addColumn<qint64>("afterForward");
    QTest::addColumn<qint64>("afterBackward");
    QTest::newRow("2.x on h200: 32 MiB per thread") << "2.x"
                                                    << "h200"
                                                    << "-" << 32 * MiB << 64 * MiB;
    QTest::newRow("2.x on a100: 8320 KiB per thread") << "2.x"
                                                      << "a100"
                                                      << "-" << 8519680LL << 2 * 8519680LL;
    QTest::newRow("2.x, CUBLAS_WORKSPACE_CONFIG=:0:0") << "2.x"
                                                       << "h200"
                                                       << ":0:0" << 0LL << 0LL;
    QTest::newRow("forum: none counted") << "forum"
                                         << "h200"
                                         << "-" << 0LL << 0LL;
  }
  void perThread() {
    QFETCH(QString, version);
    QFETCH(QString, gpu);
    QFETCH(QString, config);
    QFETCH(qint64, afterForward);
    QFETCH(qint64, afterBackward);
    const std::string g = gpu.toStdString();
    const DevicePtr d =
        metaDevice(parsePyTorchVersion(version.toStdString()), g.c_str(),
                   config == "-" ? std::nullopt : std::optional<std::string>(config.toStdString()));
    Tensor a = empty({5, 7}, DType::Float32, d, "a");
    Tensor b = empty({7, 3}, DType::Float32, d, "b");
    a.setRequiresGrad(true);
    QCOMPARE(workspaceBytes(d->allocator()), 0);  // made on first use, not with the device
    Tensor y = mm(a, b);
    Tensor y2 = mm(a, b);  // the same thread: no second workspace
    QCOMPARE(workspaceBytes(d->allocator()), afterForward);
    sum(y).backward(empty({}, DType::Float32, d, "grad_output"));
    QCOMPARE(workspaceBytes(d->allocator()), afterBackward);
    sum(y2).backward(empty({}, DType::Float32, d, "grad_output"));
    QCOMPARE(workspaceBytes(d->allocator()), afterBackward);
    d->allocator().emptyCache();  // never released
    QCOMPARE(workspaceBytes(d->allocator()), afterBackward);
    if (afterBackward > 0) {
      const auto live = d->allocator().liveRecords();
      QStringList labels;
      for (const AllocationRecord* r : live)
        if (r->category == MemoryCategory::CublasWorkspace)
          labels << QString::fromStdString(r->label);
      QCOMPARE(labels, QStringList({"cuBLAS workspace of the main thread",
                                    "cuBLAS workspace of the autograd thread"}));
    }
  }

  void eachStreamHasItsOwn() {  // setWorkspaceForHandle: one per (handle, stream)
    const DevicePtr d = metaDevice(PyTorchVersion::V2);
    Tensor a = empty({5, 7}, DType::Float32, d, "a");
    Tensor b = empty({7, 3}, DType::Float32, d, "b");
    mm(a, b);
    const qint64 one = workspaceBytes(d->allocator());
    QCOMPARE(one, 32 * MiB);
    d->allocator().setStream(3);
    mm(a, b);  // the main thread's handle on a side stream: a second workspace
    mm(a, b);
    QCOMPARE(workspaceBytes(d->allocator()), 2 * one);
    d->allocator().setStream(0);
    mm(a, b);
    QCOMPARE(workspaceBytes(d->allocator()), 2 * one);
    QStringList labels;
    for (const AllocationRecord* r : d->allocator().liveRecords())
      if (r->category == MemoryCategory::CublasWorkspace)
        labels << QString::fromStdString(r->label);
    QCOMPARE(labels, QStringList({"cuBLAS workspace of the main thread",
                                  "cuBLAS workspace of the main thread on stream 3"}));
  }

  void emptyProductTakesNoHandle() {
    const DevicePtr d = metaDevice(PyTorchVersion::V2);
    Tensor a = empty({5, 0}, DType::Float32, d, "a");
    Tensor b = empty({0, 3}, DType::Float32, d, "b");
    mm(a, b);  // m == 0: zeros, no cuBLAS call
    QCOMPARE(workspaceBytes(d->allocator()), 0);
  }

  void description() {
    QCOMPARE(cublasWorkspaceDescription(CudaThread::Autograd, 32 * MiB),
             std::string("cuBLAS workspace of the autograd thread, 32.00 MiB, kept for the life "
                         "of the process"));
  }

  void topk_data() {
    QTest::addColumn<qint64>("slices");
    QTest::addColumn<qint64>("sliceSize");
    QTest::addColumn<qint64>("elementBytes");
    QTest::addColumn<QString>("gpu");
    QTest::addColumn<QList<qint64>>("bytes");  // the allocations, in order
    // 512 x 4096 float32 on an H200 (132 SMs): 11 items per thread, 2 blocks per slice; the
    // sizes a memory snapshot of torch.topk(x, 10) shows on an H200.
    QTest::newRow("512 x 4096 float32, h200")
        << 512LL << 4096LL << 4LL << "h200"
        << QList<qint64>{2048, 4096, 4096, 524288, 524288, 4096, 4096, 1279, 1279};
    // On a T4 (40 SMs, 16 blocks per SM: 6 blocks of 256 threads by registers): 35 items per
    // thread, one block per slice.
    QTest::newRow("512 x 4096 float32, t4")
        << 512LL << 4096LL << 4LL << "t4"
        << QList<qint64>{2048, 4096, 4096, 262144, 524288, 2048, 2048, 1279, 1279};
    QTest::newRow("float64: 8-byte radix")
        << 512LL << 4096LL << 8LL << "h200"
        << QList<qint64>{4096, 4096, 8192, 524288, 524288, 4096, 4096, 1279, 1279};
    QTest::newRow("single-block path: nothing")
        << 100LL << 1000LL << 4LL << "h200" << QList<qint64>{};
    QTest::newRow("one long slice") << 1LL << 100000LL << 4LL << "h200"
                                    << QList<qint64>{4, 8, 8, 50176, 1024, 392, 392, 1279, 1279};
  }
  void topk() {
    QFETCH(qint64, slices);
    QFETCH(qint64, sliceSize);
    QFETCH(qint64, elementBytes);
    QFETCH(QString, gpu);
    QFETCH(QList<qint64>, bytes);
    const GpuArchitecture* arch = findGpuArchitecture(gpu.toStdString());
    QVERIFY(arch);
    QList<qint64> got;
    for (const TemporaryStep& s : topkTemporaries(slices, sliceSize, elementBytes, *arch))
      if (s.freeStep < 0) got << s.bytes;
    QCOMPARE(got, bytes);
  }

  void topkPeakOnDevice() {
    // softmax_topk of the H200 measurement: topk's buffers raise the peak by 1068544 bytes.
    const DevicePtr d = metaDevice(PyTorchVersion::V2);
    Tensor s = empty({512, 4096}, DType::Float32, d, "s");
    d->allocator().resetPeak();
    const qint64 before = d->allocator().current().allocatedBytes;
    auto [v, i] = matmulviz::topk(s, 10, -1);
    QCOMPARE(d->allocator().current().allocatedBytes - before, 20480 + 40960);
    QCOMPARE(d->allocator().peak().allocatedBytes - before, 20480 + 40960 + 1068544);
  }

  void softmaxBackwardTmp() {
    const DevicePtr d = metaDevice(PyTorchVersion::V2);
    Tensor x = empty({512, 512}, DType::Float32, d, "x");
    x.setRequiresGrad(true);
    Tensor s = softmax(x, -1);
    Tensor g = empty({512, 512}, DType::Float32, d, "grad");
    d->allocator().resetPeak();
    const qint64 before = d->allocator().current().allocatedBytes;
    s.backward(g);
    // grad_input (kept as x.grad) and tmp = grad * output, freed before the op returns
    QCOMPARE(d->allocator().current().allocatedBytes - before, MiB);
    QCOMPARE(d->allocator().peak().allocatedBytes - before, 2 * MiB);
  }
};

QTEST_GUILESS_MAIN(TestCublasWorkspace)
#include "test_cublas_workspace.moc"
