// Benchmark of issue 5 (not a test: prints a ratio measured side by side in one run).
//   matmul_with_multi_head(A1 [b,s,h], W1 [h,e], nh) on the engine (views + ONE bmm of nh
//   GEMMs [b*s, hd] @ [hd, e], output [b,s,nh,e])
//   / one BLAS sgemm of the same FLOPs ([b*s, h] @ [h, e] = 2*b*s*h*e)   target <= 1.5
// Defaults: b=8, s=1024, h=1024, e=1024, nh=16, float32. All timings are warm: every buffer is
// touched before timing (this machine pays ~2 s/GiB for fresh pages); the engine's device
// keeps its cached 512 MiB output segment between runs, as PyTorch's caching allocator does.
// The two are timed interleaved, median of --repeats each.
// Usage: bench_engine_multihead [--b B] [--s S] [--h H] [--e E] [--heads NH] [--repeats R]
#include "core/memory/host_backing.h"
#include "core/multihead/multihead.h"
#include "core/ops/ops.h"
#include "core/util/blas.h"
#include "tests/bench/bench_stats.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

using namespace matmulviz;

namespace {

using matmulviz::bench::median;
using matmulviz::bench::seconds;

void fillRandom(float* p, int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int64_t i = 0; i < n; ++i) p[i] = normal(rng);
}

}  // namespace

int main(int argc, char** argv) {
  int64_t b = 8, s = 1024, h = 1024, e = 1024, nh = 16;
  int repeats = 5;
  for (int x = 1; x + 1 < argc; x += 2) {
    const std::string k = argv[x];
    const long long v = std::stoll(argv[x + 1]);
    if (k == "--b") b = v;
    if (k == "--s") s = v;
    if (k == "--h") h = v;
    if (k == "--e") e = v;
    if (k == "--heads") nh = v;
    if (k == "--repeats") repeats = static_cast<int>(v);
  }
  HostBacking backing;
  auto device = std::make_shared<DeviceContext>(DeviceKind::Cpu, backing,
                                                CachingAllocator::Options{std::nullopt, false});
  Tensor A1 = empty({b, s, h}, DType::Float32, device, "A1");
  Tensor W1 = empty({h, e}, DType::Float32, device, "W1");
  fillRandom(A1.data<float>(), A1.numel(), 1);
  fillRandom(W1.data<float>(), W1.numel(), 2);
  // The sgemm's own output [b*s, e], touched before timing.
  std::vector<float> C(static_cast<size_t>(b * s * e), 0.0f);
  const auto sgemm = [&] {
    blas::gemm(false, false, b * s, e, h, 1.0f, A1.data<float>(), h, W1.data<float>(), e, 0.0f,
               C.data(), e);
  };
  const auto engine = [&] {
    const Tensor O2 = matmulWithMultiHead(A1, W1, nh);
    return O2.numel();
  };
  sgemm();   // warm-up: touches C
  engine();  // warm-up: the allocator's output segment is touched and stays cached
  std::vector<double> tEngine, tSgemm;
  for (int r = 0; r < repeats; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    engine();
    tEngine.push_back(seconds(t0));
    t0 = std::chrono::steady_clock::now();
    sgemm();
    tSgemm.push_back(seconds(t0));
  }
  const double flops = 2.0 * static_cast<double>(b * s) * static_cast<double>(h * e);
  const double me = median(tEngine), ms = median(tSgemm);
  std::printf(
      "matmul_with_multi_head b=%lld s=%lld h=%lld e=%lld nh=%lld float32, %d repeats, "
      "BLAS threads %d\n",
      static_cast<long long>(b), static_cast<long long>(s), static_cast<long long>(h),
      static_cast<long long>(e), static_cast<long long>(nh), repeats, blas::numThreads());
  std::printf("  engine (views + one bmm): %8.1f ms  %6.1f GFLOP/s\n", me * 1e3, flops / me * 1e-9);
  std::printf("  one sgemm, same FLOPs:    %8.1f ms  %6.1f GFLOP/s\n", ms * 1e3, flops / ms * 1e-9);
  const double ratio = me / ms;
  std::printf("%-44s %8.4f  %s (target <= 1.5)\n", "multi_head / sgemm", ratio,
              ratio <= 1.5 ? "ok" : "MISSED");
  return 0;
}
