#include "kernels/ladder.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/memory/host_backing.h"
#include "core/ops/einsum.h"
#include "core/tensor/device.h"
#include "core/tensor/tensor.h"
#include "core/util/blas.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/cuda_probe.h"
#include "kernels/matmul_problem.h"
#include "kernels/registry.h"

namespace matmulviz::kernels {
namespace {

struct Cancelled {};

/// Everything a rung needs: the problem, its inputs, the float64 reference and the output.
struct Bench {
  const LadderOptions& o;
  MatmulProblem p;
  MatmulInputs in;
  std::vector<double> ref;
  std::vector<float> out;
  const std::atomic<bool>* cancel;

  bool cancelled() const { return cancel != nullptr && cancel->load(); }

  /// Median wall time of `repeats` calls of run(), seconds. Throws Cancelled between calls.
  template <class F>
  double median(F&& run) {
    std::vector<double> times;
    for (int r = 0; r < o.repeats; ++r) {
      if (cancelled()) throw Cancelled{};
      const auto t0 = std::chrono::steady_clock::now();
      run();
      times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
  }
};

/// C[i, j] = sum_k A[i, k] B[k, j], the way one writes it first: row-major, no blocking.
[[gnu::noinline]] void tripleLoop(const float* a, const float* b, float* c, std::int64_t M,
                                  std::int64_t K, std::int64_t N) {
  for (std::int64_t i = 0; i < M; ++i) {
    for (std::int64_t j = 0; j < N; ++j) {
      float tmp = 0.f;
      for (std::int64_t k = 0; k < K; ++k) tmp += a[i * K + k] * b[k * N + j];
      c[i * N + j] = tmp;
    }
  }
}

double runSimulated(Bench& b) {
  const KernelVariant& naive = *findKernel("naive");
  sim::LaunchOptions options;
  options.kernel = "naive";
  options.threads = b.o.simThreads;
  return b.median([&] { naive.simulate(b.p, b.o.tpb, b.in, b.out.data(), options); });
}

double runLoop(Bench& b) {
  return b.median(
      [&] { tripleLoop(b.in.a.data(), b.in.b.data(), b.out.data(), b.p.M, b.p.K, b.p.N); });
}

double runEinsum(Bench& b) {
  const std::int64_t bytes = 4 * (b.p.M * b.p.K + b.p.K * b.p.N + b.p.M * b.p.N);
  HostBacking backing(2 * bytes + (std::int64_t{64} << 20));
  const DevicePtr device = std::make_shared<DeviceContext>(
      DeviceKind::Cpu, backing, CachingAllocator::Options{std::nullopt, false});
  const Tensor A = empty({b.p.M, b.p.K}, DType::Float32, device, "A");
  const Tensor B = empty({b.p.K, b.p.N}, DType::Float32, device, "B");
  std::memcpy(A.data<float>(), b.in.a.data(), b.in.a.size() * sizeof(float));
  std::memcpy(B.data<float>(), b.in.b.data(), b.in.b.size() * sizeof(float));
  Tensor C;
  const double s = b.median([&] {
    C = Tensor();  // the previous result is freed first, as `c = einsum(...)` in a loop
    C = einsum("ik,kj->ij", {A, B});
  });
  const std::vector<double> values = C.toDoubles();
  std::transform(values.begin(), values.end(), b.out.begin(),
                 [](double v) { return static_cast<float>(v); });
  return s;
}

double runBlas(Bench& b) {
  return b.median([&] { blasMatmul(b.p, false, b.in, b.out.data()); });
}

double runCuda(Bench& b, const std::string& kernel) {
  const cuda::CudaRun run = kernel == "cublas"
                                ? cuda::runCublas(b.p, cuda::CublasMode::Gemm, b.in, b.o.repeats)
                                : cuda::runKernel(kernel, b.p, b.o.tpb, b.in, b.o.repeats);
  std::copy(run.out.begin(), run.out.end(), b.out.begin());
  return run.medianMs / 1e3;
}

struct RungSpec {
  const char* name;
  const char* what;
  bool gpu;
};

constexpr RungSpec kRungs[] = {
    {"simulated",
     "naive kernel on the simulated launcher, one CUDA thread at a time per host thread (wall)",
     false},
    {"loop", "plain C++ triple loop, C[i, j] += A[i, k] * B[k, j] (wall)", false},
    {"einsum", "engine einsum(\"ik,kj->ij\", {A, B}): views + bmm through BLAS (wall)", false},
    {"blas", "one OpenBLAS sgemm (wall)", false},
    {"cuda_naive", "naive kernel on the GPU, x over rows (CUDA events, kernel only)", true},
    {"cuda_coalesced", "coalesced kernel on the GPU, x over columns (CUDA events)", true},
    {"cuda_smem_tiled", "shared-memory tiled kernel on the GPU (CUDA events)", true},
    {"cublas", "one cublasSgemm, float32 without tensor cores (CUDA events)", true},
};

double runRung(Bench& b, const std::string& name) {
  if (name == "simulated") return runSimulated(b);
  if (name == "loop") return runLoop(b);
  if (name == "einsum") return runEinsum(b);
  if (name == "blas") return runBlas(b);
  return runCuda(b, name == "cublas" ? name : name.substr(5));  // "cuda_naive" -> "naive"
}

}  // namespace

void validateLadder(const LadderOptions& o) {
  if (o.repeats < 1) throw std::invalid_argument("repeats must be at least 1");
  const MatmulProblem p{o.M, o.K, o.N, 1, 1};
  findKernel("naive")->config(p, o.tpb);  // sizes, int32 indexing, TPB, CUDA's grid limits
  findKernel("coalesced")->config(p, o.tpb);
  findKernel("smem_tiled")->config(p, o.tpb);
}

double ladderFlops(const LadderOptions& o) {
  return 2.0 * static_cast<double>(o.M) * static_cast<double>(o.N) * static_cast<double>(o.K);
}

LadderReport runLadder(const LadderOptions& options, const LadderProgress& progress,
                       const std::atomic<bool>* cancel) {
  validateLadder(options);
  LadderReport report;
  report.options = options;
  report.blasThreads = blas::numThreads();
  report.simThreads = sim::resolveSimThreads(options.simThreads);
  Bench b{options, MatmulProblem{options.M, options.K, options.N, 1, 1}, {}, {}, {}, cancel};
  b.in = makeInputs(b.p, false, options.seed);
  b.ref = referenceMatmul(b.p, false, b.in);
  b.out.assign(static_cast<std::size_t>(options.M * options.N), 0.f);
  const CudaStatus status = options.cuda ? probeCuda() : CudaStatus{};
  report.gpu = !options.cuda      ? "GPU rungs not requested"
               : status.available ? status.deviceNames.front()
                                  : "CUDA is not available: " + status.reason;
  const double flops = ladderFlops(options);
  double previous = 0;
  const std::size_t count = std::size(kRungs);
  for (std::size_t i = 0; i < count; ++i) {
    LadderRung rung{kRungs[i].name, kRungs[i].what};
    if (b.cancelled()) {
      rung.skipped = "cancelled";
    } else if (kRungs[i].gpu && !status.available) {
      rung.skipped = report.gpu;
    } else {
      try {
        std::fill(b.out.begin(), b.out.end(), 0.f);
        rung.seconds = runRung(b, rung.name);
        rung.ok = true;
      } catch (const Cancelled&) {
        rung.skipped = "cancelled";
      } catch (const std::exception& e) {
        rung.skipped = e.what();
      }
    }
    if (rung.ok) {
      rung.gflops = rung.seconds > 0 ? flops / rung.seconds / 1e9 : 0;
      rung.speedup = previous > 0 && rung.seconds > 0 ? previous / rung.seconds : 0;
      rung.maxRelErr = maxRelErr(b.out.data(), b.ref);
      previous = rung.seconds;
    }
    report.rungs.push_back(rung);
    if (progress) progress(i, count, report.rungs.back());
  }
  return report;
}

}  // namespace matmulviz::kernels
