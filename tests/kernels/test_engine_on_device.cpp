// The engine on a device with its own memory: every op and every strategy of the PyTorch forum post
// on a simulated CUDA device (kernels/engine/simulated_backend.h), which runs the engine's kernel
// bodies, the same ones the CUDA backend launches, through the simulator, on guarded memory the
// host cannot touch. Each case is compared with the cpu device: the same values (to float32
// rounding), and the same memory, byte for byte, because the allocator model is the same.
// Built a second time as test_engine_on_gpu (MATMULVIZ_ENGINE_ON_GPU, label gpu): the same cases
// on the real CUDA backend, skipped with the probe's reason when no device answers.
#include <QtTest>

#include <cmath>
#include <csignal>
#include <functional>
#include <random>

#include <sys/wait.h>
#include <unistd.h>

#include "core/autograd/grad_mode.h"
#include "core/memory/host_backing.h"
#include "core/multihead/multihead.h"
#include "core/multihead/multihead_report.h"
#include "core/ops/einsum.h"
#include "core/ops/ops.h"
#include "core/strategies/runner.h"
#include "kernels/engine/simulated_backend.h"
#ifdef MATMULVIZ_ENGINE_ON_GPU
#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/cuda_probe.h"
#endif

using namespace matmulviz;

namespace {

HostBacking& hostBacking() {
  static HostBacking backing;
  return backing;
}

DevicePtr cpuDevice() {
  return std::make_shared<DeviceContext>(DeviceKind::Cpu, hostBacking(),
                                         CachingAllocator::Options{});
}

/// A host tensor of uniform [-1, 1) values, seeded.
Tensor hostRandom(const Shape& sizes, uint64_t seed, DType dtype = DType::Float32) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(static_cast<size_t>(numelOf(sizes)));
  for (double& x : v) x = u(rng);
  return fromDoubles(sizes, v, dtype);
}

/// The device under test: simulated, or the GPU in test_engine_on_gpu.
DevicePtr deviceUnderTest(CachingAllocator::Options options = {}) {
#ifdef MATMULVIZ_ENGINE_ON_GPU
  return kernels::cuda::makeCudaDevice(options);
#else
  return kernels::engine::makeSimulatedCudaDevice(options);
#endif
}

Tensor hostIndex(const std::vector<double>& values) {
  return fromDoubles({static_cast<int64_t>(values.size())}, values, DType::Int64);
}

std::vector<double> onHost(const Tensor& t) {
  NoGradGuard noGrad;
  return toDevice(t, nullptr, "host copy").toDoubles();
}

double maxAbsDiff(const std::vector<double>& x, const std::vector<double>& y) {
  double d = 0;
  for (size_t e = 0; e < x.size(); ++e) d = std::max(d, std::abs(x[e] - y[e]));
  return d;
}

/// What a case returns: the tensors to compare (all on the case's device).
using Case = std::function<std::vector<Tensor>(const DevicePtr&)>;

struct Outcome {
  std::vector<std::vector<double>> values;
  std::vector<Shape> shapes;
  MemoryCounters current, peak;
};

Outcome runCase(const Case& f, const DevicePtr& device) {
  Outcome o;
  {
    const std::vector<Tensor> results = f(device);
    o.current = device->allocator().current();  // before the host copies below
    o.peak = device->allocator().peak();
    for (const Tensor& t : results) {
      o.values.push_back(onHost(t));
      o.shapes.push_back(t.sizes());
    }
  }
  return o;
}

Tensor in(const DevicePtr& d, const Shape& sizes, uint64_t seed, bool grad = false) {
  Tensor t = toDevice(hostRandom(sizes, seed), d, "input");
  if (grad) t.setRequiresGrad(true);
  return t;
}

}  // namespace

Q_DECLARE_METATYPE(Case)

class TestEngineOnDevice : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
#ifdef MATMULVIZ_ENGINE_ON_GPU
    const kernels::CudaStatus cuda = kernels::probeCuda();
    if (!cuda.available)
      QSKIP(qPrintable("no CUDA device: " + QString::fromStdString(cuda.reason)));
#endif
  }

  void opMatchesCpu_data() {
    QTest::addColumn<Case>("op");
    QTest::addRow("contiguous of a permute") << Case([](const DevicePtr& d) {
      return std::vector<Tensor>{contiguous(permute(in(d, {3, 4, 5}, 1), {2, 0, 1}))};
    });
    QTest::addRow("to float64 and back") << Case([](const DevicePtr& d) {
      Tensor x = toDType(in(d, {7, 3}, 2), DType::Float64);
      Tensor strided = toDevice(transpose(hostRandom({3, 5}, 40), 0, 1), d, "from a host view");
      return std::vector<Tensor>{x, toDType(transpose(x, 0, 1), DType::Float32), strided,
                                 transpose(x, 0, 1)};  // copied to the host through staging
    });
    QTest::addRow("zeros") << Case([](const DevicePtr& d) {
      return std::vector<Tensor>{zeros({5, 6}, DType::Float32, d, "zeros")};
    });
    QTest::addRow("add and add_ of strided views") << Case([](const DevicePtr& d) {
      Tensor a = in(d, {4, 6}, 3), b = in(d, {6, 4}, 4);
      Tensor s = add(a, transpose(b, 0, 1));
      addInPlace(slice(s, 1, 0, 6, 2), slice(a, 1, 1, 6, 2));
      return std::vector<Tensor>{s};
    });
    QTest::addRow("mul with broadcasting") << Case([](const DevicePtr& d) {
      return std::vector<Tensor>{mul(in(d, {3, 1, 5}, 5), in(d, {4, 1}, 6))};
    });
    QTest::addRow("sum, sumTo, sumDims") << Case([](const DevicePtr& d) {
      Tensor x = in(d, {3, 4, 5}, 7);
      return std::vector<Tensor>{sum(x), sumTo(x, {4, 1}), sumDims(x, {0, 2}, true),
                                 sumDims(permute(x, {2, 1, 0}), {1}, false)};
    });
    QTest::addRow("mm, bmm, matmul with broadcast batch") << Case([](const DevicePtr& d) {
      Tensor a = in(d, {5, 7}, 8), b = in(d, {7, 3}, 9);
      Tensor x = in(d, {2, 5, 7}, 10), y = in(d, {2, 3, 7}, 11);
      return std::vector<Tensor>{mm(a, b), mm(transpose(b, 0, 1), transpose(a, 0, 1)),
                                 bmm(x, transpose(y, 1, 2)), matmul(in(d, {4, 1, 5, 7}, 12), b),
                                 matmul(in(d, {3, 1, 2, 5}, 13), in(d, {4, 5, 6}, 14))};
    });
    QTest::addRow("index with repeats and negative indices") << Case([](const DevicePtr& d) {
      Tensor c = in(d, {6, 3, 4}, 15);
      return std::vector<Tensor>{index(c, hostIndex({5, 0, -1, 2, 2})),
                                 index(transpose(c, 1, 2), hostIndex({1, -6})),
                                 index(c, fromDoubles({}, {3}, DType::Int64))};
    });
    QTest::addRow("cat") << Case([](const DevicePtr& d) {
      return std::vector<Tensor>{cat({in(d, {2, 3}, 16), in(d, {4, 3}, 17)}, 0),
                                 cat({in(d, {2, 3}, 18), in(d, {2, 1}, 19)}, 1)};
    });
    QTest::addRow("gather_bmm forward and backward") << Case([](const DevicePtr& d) {
      Tensor a = in(d, {9, 2, 5}, 20, true), c = in(d, {4, 5, 3}, 21, true);
      Tensor out = gatherBmm(a, c, hostIndex({3, 0, 3, 1, 1, 1, 2, 0, 3}));
      out.backward(in(d, {9, 2, 3}, 22));
      return std::vector<Tensor>{out, a.grad(), c.grad()};
    });
    // Kernel 08 where it applies (float32, contiguous), the one-thread-per-element kernel where
    // it does not: more matrices than items, several rows per item, a transposed a, float64.
    QTest::addRow("gather_bmm grouped, empty buckets, I = 3") << Case([](const DevicePtr& d) {
      Tensor a = in(d, {5, 3, 7}, 40), c = in(d, {11, 7, 6}, 41);
      return std::vector<Tensor>{gatherBmm(a, c, hostIndex({10, 0, 10, 4, 0}))};
    });
    QTest::addRow("gather_bmm on a transposed a") << Case([](const DevicePtr& d) {
      Tensor a = transpose(in(d, {6, 4, 2}, 42), 1, 2), c = in(d, {3, 4, 5}, 43);
      return std::vector<Tensor>{gatherBmm(a, c, hostIndex({2, 0, 1, 1, 0, 2}))};
    });
    QTest::addRow("gather_bmm in float64") << Case([](const DevicePtr& d) {
      Tensor a = toDevice(hostRandom({4, 1, 3}, 44, DType::Float64), d, "a");
      Tensor c = toDevice(hostRandom({2, 3, 5}, 45, DType::Float64), d, "c");
      return std::vector<Tensor>{gatherBmm(a, c, hostIndex({1, 1, 0, 1}))};
    });
    QTest::addRow("index and matmul backward") << Case([](const DevicePtr& d) {
      Tensor a = in(d, {5, 1, 4}, 23, true), c = in(d, {3, 4, 2}, 24, true);
      Tensor out = matmul(a, index(c, hostIndex({2, 2, 0, 1, 2})));
      out.backward(in(d, {5, 1, 2}, 25));
      return std::vector<Tensor>{out, a.grad(), c.grad()};
    });
    QTest::addRow("einsum with a diagonal and sums") << Case([](const DevicePtr& d) {
      Tensor x = in(d, {3, 4, 4}, 26, true), y = in(d, {4, 5}, 27, true);
      Tensor out = einsum("bii,ij->bj", {x, y});
      out.backward(in(d, {3, 5}, 28));
      return std::vector<Tensor>{out, x.grad(), y.grad(), einsum("bij->", {x})};
    });
    QTest::addRow("multi-head matmul") << Case([](const DevicePtr& d) {
      Tensor A1 = in(d, {2, 5, 8}, 29, true), W1 = in(d, {8, 6}, 30, true);
      Tensor O2 = matmulWithMultiHead(A1, W1, 2);
      O2.backward(in(d, {2, 5, 2, 6}, 31));
      return std::vector<Tensor>{O2, A1.grad(), W1.grad()};
    });
    QTest::addRow("importance matmul with top_p and top_k") << Case([](const DevicePtr& d) {
      Tensor A1 = in(d, {2, 5, 8}, 32), W1 = in(d, {8, 6}, 33);
      Tensor P = toDevice(
          fromDoubles({2, 5}, {.9, .1, .5, .7, .2, .3, .8, .8, .05, .6}, DType::Float32), d, "P");
      // 6 important tokens (P >= 0.5 among each row's top 3): O3 [6, 2, 6]
      const ImportanceResult r = matmulWithImportance(A1, P, W1, 2, 0.5, 3, in(d, {6, 2, 6}, 34));
      return std::vector<Tensor>{r.O3, r.dA1, r.dW1};
    });
  }

  void opMatchesCpu() {
    QFETCH(Case, op);
    const Outcome cpu = runCase(op, cpuDevice());
    auto device = deviceUnderTest();
    const Outcome sim = runCase(op, device);
    QCOMPARE(sim.values.size(), cpu.values.size());
    for (size_t x = 0; x < cpu.values.size(); ++x) {
      QCOMPARE(sim.shapes[x], cpu.shapes[x]);
      QVERIFY2(maxAbsDiff(sim.values[x], cpu.values[x]) < 1e-5,
               qPrintable(QString("result %1 differs by %2")
                              .arg(x)
                              .arg(maxAbsDiff(sim.values[x], cpu.values[x]))));
    }
    // The same allocator model with the same requests: the same bytes.
    QCOMPARE(sim.current.allocatedBytes, cpu.current.allocatedBytes);
    QCOMPARE(sim.peak.allocatedBytes, cpu.peak.allocatedBytes);
    QCOMPARE(sim.peak.reservedBytes, cpu.peak.reservedBytes);
  }

#ifndef MATMULVIZ_ENGINE_ON_GPU
  void workGoesThroughTheBackend() {
    auto device = kernels::engine::makeSimulatedCudaDevice();
    auto* backend = dynamic_cast<kernels::engine::SimulatedComputeBackend*>(device->compute());
    QVERIFY(backend);
    const auto before = backend->launches();
    Tensor y = mm(in(device, {3, 4}, 1), in(device, {4, 2}, 2));
    QVERIFY(backend->launches() > before);
    QCOMPARE(y.deviceKind(), DeviceKind::Cuda);
    QVERIFY(y.compute() == backend);
    // The host cannot read device memory directly: item() says so instead of crashing.
    QVERIFY_THROWS_EXCEPTION(std::logic_error, y.item());
    QCOMPARE(onHost(y).size(), size_t{6});
  }

  // The fused strategy's forward runs kernel 08 (zero the buckets, histogram, prefix sum,
  // scatter, product) where groupedBmmApplies, one gather kernel elsewhere; the buckets are one
  // allocation, freed when the op returns.
  void gatherBmmRunsKernel08WhereItApplies() {
    auto device = kernels::engine::makeSimulatedCudaDevice();
    auto* backend = dynamic_cast<kernels::engine::SimulatedComputeBackend*>(device->compute());
    QVERIFY(backend);
    const Tensor q = hostIndex({2, 0, 2, 1});
    Tensor a = in(device, {4, 1, 3}, 1), c = in(device, {3, 3, 5}, 2);
    const auto before = backend->launches();
    const auto allocatedBefore = std::int64_t(device->allocator().current().allocatedBytes);
    const Tensor out = gatherBmm(a, c, q);
    QCOMPARE(backend->launches() - before, std::int64_t{5});
    QCOMPARE(std::int64_t(device->allocator().current().allocatedBytes) - allocatedBefore,
             std::int64_t{512});  // out only: the buckets are freed
    const Tensor a64 = toDevice(hostRandom({4, 1, 3}, 3, DType::Float64), device, "a");
    const Tensor c64 = toDevice(hostRandom({3, 3, 5}, 4, DType::Float64), device, "c");
    const auto before64 = backend->launches();
    (void)gatherBmm(a64, c64, q);
    QCOMPARE(backend->launches() - before64, std::int64_t{1});
  }

  void hostAccessToDeviceMemoryFaults() {
    // What makes the cases above meaningful: an op that skipped the backend and read device
    // memory on the host would crash them. Checked in a child process.
    auto device = kernels::engine::makeSimulatedCudaDevice();
    const Tensor y = in(device, {4, 4}, 1);
    const pid_t child = fork();
    QVERIFY(child >= 0);
    if (child == 0) {
      std::signal(SIGSEGV, SIG_DFL);  // no crash handler (Qt Test's, ASan's) in the child
      volatile float v = *y.data<float>();
      (void)v;
      _exit(0);  // reached only if the read did not fault
    }
    int status = 0;
    QCOMPARE(waitpid(child, &status, 0), child);
    QVERIFY2(WIFSIGNALED(status) || WEXITSTATUS(status) != 0,
             "the host read device memory without a fault");
  }

#endif

  void unsupportedDtypeIsAClearError() {
    auto device = deviceUnderTest();
    Tensor h = toDevice(hostRandom({4}, 1, DType::Float16), device, "h");
    try {
      addInPlace(h, h);
      QFAIL("float16 arithmetic on the device should be refused");
    } catch (const std::invalid_argument& e) {
      QVERIFY2(QString(e.what()).contains("float16"), e.what());
    }
  }

  void strategiesMatchCpu_data() {
    QTest::addColumn<QString>("strategy");
    for (const char* s : {"strategy1", "strategy2", "strategy3", "direct", "fused"})
      QTest::newRow(s) << QString(s);
  }
  void strategiesMatchCpu() {
    QFETCH(QString, strategy);
    RunConfig c;
    c.workload.n = 24, c.workload.m = 5, c.workload.i = 2, c.workload.j = 6, c.workload.k = 3;
    c.workload.batch = 8;
    c.strategies = {strategy.toStdString()};
    c.requiresGrad.a = true;
    c.requiresGrad.c = true;
    c.repeats = 1;
    c.backward = true;
    c.force = true;
    c.keepOutputs = true;
    const Inputs inputs = makeRandomInputs(c.workload, 3);
    const StrategyRun cpu = StrategyRunner(c, inputs).run().runs.at(0);
    c.device = DeviceKind::Cuda;
    c.deviceFactory = [](CachingAllocator::Options o) { return deviceUnderTest(o); };
    const StrategiesReport report = StrategyRunner(c, inputs).run();
    const StrategyRun sim = report.runs.at(0);
    QCOMPARE(report.device, DeviceKind::Cuda);
    QVERIFY2(sim.ok, sim.error.c_str());
    QCOMPARE(sim.current.allocatedBytes, cpu.current.allocatedBytes);
    QCOMPARE(sim.peak.allocatedBytes, cpu.peak.allocatedBytes);
    QCOMPARE(sim.peak.reservedBytes, cpu.peak.reservedBytes);
    QCOMPARE(sim.backward.status, BackwardOutcome::Status::Ran);
    QCOMPARE(sim.backward.maxMemBytes, cpu.backward.maxMemBytes);
    QCOMPARE(sim.backward.curMemBytes, cpu.backward.curMemBytes);
    QVERIFY2(sim.maxRelErr < 1e-5, qPrintable(QString::number(sim.maxRelErr)));
    QVERIFY(sim.backward.maxRelErrDA < 1e-5);
    QVERIFY(sim.backward.maxRelErrDC < 1e-5);
    QVERIFY(maxAbsDiff(sim.out.toDoubles(), cpu.out.toDoubles()) < 1e-5);
    QVERIFY(maxAbsDiff(sim.backward.dC.toDoubles(), cpu.backward.dC.toDoubles()) < 1e-5);
  }

  /// A backward estimated over the limit is skipped on the cuda device as on the cpu one, the
  /// estimate at the device's bandwidth (RunConfig::deviceBandwidthBytesPerS: the GPU profile's,
  /// set by useCudaDeviceIfAsked); --force runs it.
  void slowBackwardSkippedOnDevice_data() {
    QTest::addColumn<double>("bandwidth");
    QTest::addColumn<bool>("force");
    QTest::addColumn<int>("status");
    QTest::addRow("slow device: skipped") << 1.0 << false << int(BackwardOutcome::Status::Skipped);
    QTest::addRow("slow device, force: runs") << 1.0 << true << int(BackwardOutcome::Status::Ran);
    QTest::addRow("fast device: runs") << 1e15 << false << int(BackwardOutcome::Status::Ran);
  }
  void slowBackwardSkippedOnDevice() {
    QFETCH(double, bandwidth);
    QFETCH(bool, force);
    QFETCH(int, status);
    RunConfig c;
    c.workload.n = 24, c.workload.m = 5, c.workload.i = 2, c.workload.j = 6, c.workload.k = 3;
    c.workload.batch = 8;
    c.strategies = {"strategy2"};
    c.requiresGrad.c = true;
    c.repeats = 1;
    c.backward = true;
    c.force = force;
    c.device = DeviceKind::Cuda;
    c.deviceFactory = [](CachingAllocator::Options o) { return deviceUnderTest(o); };
    c.deviceBandwidthBytesPerS = bandwidth;
    const StrategyRun r = StrategyRunner(c, makeRandomInputs(c.workload, 3)).run().runs.at(0);
    QVERIFY2(r.ok, r.error.c_str());
    QCOMPARE(int(r.backward.status), status);
    // per row a zero gradient of all of c and the [J, K] gradient of mat2, 512-byte blocks
    QVERIFY(r.backward.estimateBytes > 0);
    QCOMPARE(r.backward.estimateSeconds, 4.5 * double(r.backward.estimateBytes) / bandwidth);
    if (status == int(BackwardOutcome::Status::Skipped)) {
      QCOMPARE(int(r.backward.reason), int(BackwardOutcome::Reason::OverTimeLimit));
      QVERIFY2(QString::fromStdString(r.backward.message).contains("at about 1e-09 GB/s"),
               r.backward.message.c_str());
    }
  }

  /// runMultihead (what `matmulviz-cli multihead --device cuda` runs) on the device: the cpu
  /// device's tokens, outputs, gradients and memory, and the report says where it ran.
  void multiheadReportMatchesCpu() {
    MultiheadConfig c;
    c.b = 3, c.s = 6, c.h = 8, c.e = 5, c.numHeads = 2;
    c.topP = 0.3;
    c.topK = 4;
    c.backward = true;
    const MultiheadInputs inputs = prepareMultiheadInputs(c, {});
    const MultiheadReport cpu = runMultihead(c, inputs);
    c.deviceFactory = [](CachingAllocator::Options o) { return deviceUnderTest(o); };
    const MultiheadReport dev = runMultihead(c, inputs);
    QCOMPARE(dev.device, DeviceKind::Cuda);
    QCOMPARE(cpu.device, DeviceKind::Cpu);
    QVERIFY(cpu.t > 0);
    QCOMPARE(dev.selectedTokens, cpu.selectedTokens);
    QCOMPARE(dev.current.allocatedBytes, cpu.current.allocatedBytes);
    QCOMPARE(dev.peak.allocatedBytes, cpu.peak.allocatedBytes);
    QCOMPARE(dev.peak.reservedBytes, cpu.peak.reservedBytes);
    QCOMPARE(dev.savedBytes, cpu.savedBytes);
    QCOMPARE(dev.savedForBackward.size(), cpu.savedForBackward.size());
    for (const auto& [got, want] :
         {std::pair{&dev.O3, &cpu.O3}, {&dev.dA1, &cpu.dA1}, {&dev.dW1, &cpu.dW1}}) {
      QCOMPARE(got->sizes(), want->sizes());
      QVERIFY(maxAbsDiff(got->toDoubles(), want->toDoubles()) < 1e-5);
    }
  }
};

QTEST_GUILESS_MAIN(TestEngineOnDevice)
#include "test_engine_on_device.moc"
