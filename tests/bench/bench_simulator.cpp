// Speed of the simulated launcher (issue 3, point 4), measured side by side in one run: the
// simulated naive and smem_tiled kernels on the lesson's 50000 x 784 x 10 product with tracing
// off, against a plain C++ triple loop computing the same product. Targets: naive at most 3x
// the loop, smem_tiled (two barriers per tile) at most 10x, and over a million simulated threads
// per (CPU) second for the kernels without barriers. Times are this thread's CPU time (the ratios
// stay meaningful on a shared machine) and wall time; each is the best of a few repeats.
//
//   bench_simulator [M K N TPB REPEATS [KERNEL]]   (KERNEL: run only that variant)
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernels/registry.h"

using namespace matmulviz;

namespace {

struct Clock {
  double cpu;
  double wall;
  static Clock now() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
    return {static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9, wall};
  }
  Clock operator-(const Clock& o) const { return {cpu - o.cpu, wall - o.wall}; }
};

/// The product the way one writes it first: C[i, j] = sum_k A[i, k] B[k, j], row-major.
__attribute__((noinline)) void tripleLoop(const float* a, const float* b, float* c, int M, int K,
                                          int N) {
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      float tmp = 0.f;
      for (int k = 0; k < K; ++k) tmp += a[i * K + k] * b[k * N + j];
      c[i * N + j] = tmp;
    }
  }
}

Clock best(std::vector<Clock> runs) {
  Clock b = runs.front();
  for (const Clock& r : runs) {
    b.cpu = std::min(b.cpu, r.cpu);
    b.wall = std::min(b.wall, r.wall);
  }
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  const int M = argc > 1 ? std::atoi(argv[1]) : 50000;
  const int K = argc > 2 ? std::atoi(argv[2]) : 784;
  const int N = argc > 3 ? std::atoi(argv[3]) : 10;
  const int tpb = argc > 4 ? std::atoi(argv[4]) : 16;
  const int repeats = argc > 5 ? std::max(1, std::atoi(argv[5])) : 3;
  const std::string only = argc > 6 ? argv[6] : "";
  const kernels::MatmulProblem p{M, K, N, 1, 1};
  const kernels::MatmulInputs in = kernels::makeInputs(p, false, 0);
  std::vector<float> out(static_cast<std::size_t>(M) * N);

  std::vector<Clock> loopRuns;
  for (int r = 0; r < repeats; ++r) {
    const Clock t0 = Clock::now();
    tripleLoop(in.a.data(), in.b.data(), out.data(), M, K, N);
    loopRuns.push_back(Clock::now() - t0);
  }
  const Clock loop = best(loopRuns);
  const std::vector<double> ref = kernels::referenceMatmul(p, false, in);
  std::printf(
      "simulated launcher vs a plain C++ triple loop: M=%d K=%d N=%d, TPB=%d, tracing off, "
      "best of %d\n",
      M, K, N, tpb, repeats);
  std::printf("%-12s %10s %10s %9s %9s %16s %10s  %s\n", "kernel", "cpu_s", "wall_s", "x_loop",
              "target", "sim_threads/s", "max_err", "grid");
  std::printf("%-12s %10.3f %10.3f %9s %9s %16s %10.2g\n", "triple_loop", loop.cpu, loop.wall,
              "1.00", "", "", kernels::maxRelErr(out.data(), ref));
  bool ok = true;
  for (const char* name : {"naive", "coalesced", "smem_tiled"}) {
    if (!only.empty() && only != name) continue;
    const kernels::KernelVariant* v = kernels::findKernel(name);
    std::vector<Clock> runs;
    sim::LaunchReport report;
    for (int r = 0; r < repeats; ++r) {
      const Clock t0 = Clock::now();
      report = v->simulate(p, tpb, in, out.data(), sim::LaunchOptions{});
      runs.push_back(Clock::now() - t0);
    }
    const Clock t = best(runs);
    const double ratio = t.cpu / loop.cpu;
    const bool barriers = std::string(name) == "smem_tiled";
    const double target = barriers ? 10.0 : 3.0;
    // per CPU second, as the ratios: wall time on a shared machine counts the other tenants
    const double threadsPerS = static_cast<double>(report.stats.threads) / t.cpu;
    // a million threads per second is the aim without barriers; smem_tiled's threads each run
    // 2 K / TPB of them, and its target is the ratio
    ok = ok && ratio <= target && (barriers || threadsPerS > 1e6);
    std::printf("%-12s %10.3f %10.3f %9.2f %8.0fx %16.3g %10.2g  %s x %s\n", name, t.cpu, t.wall,
                ratio, target, threadsPerS, kernels::maxRelErr(out.data(), ref),
                sim::toString(report.config.gridDim).c_str(),
                sim::toString(report.config.blockDim).c_str());
  }
  std::printf("%s\n", ok ? "all ratios within target" : "SOME RATIO MISSES ITS TARGET");
  return 0;
}
