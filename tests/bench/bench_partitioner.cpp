// Benchmark of issue 13 (not a test): planning the activation memory budgets 0, 0.05, ..., 1
// (21 plans) with PyTorch's partitioner rules (core/partitioner) for
//   - the 5-layer mm+cos chain of [512, 512] float32 (issue 13's example), and
//   - a 48-layer transformer-like joint graph (per layer SDPA + two mm, with their backward ops;
//     batch 4, sequence 1024, width 1024, 16 heads, ffn 4096, float16).
// A sweep = classify the graph + R, M, A once (BudgetPlanner caches them) + 21 plans (knapsack,
// final cut, backward extraction). Also times one plan from scratch (chooseSavedValues: up to
// four cuts). Goal: the 48-layer sweep under 1 s. Median of --repeats (default 5).
// Usage: bench_partitioner [--repeats R] [--layers L]
#include "core/partitioner/budget.h"
#include "core/partitioner/example_graphs.h"
#include "tests/bench/bench_stats.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

using namespace matmulviz::partitioner;

namespace {

using matmulviz::bench::median;
using matmulviz::bench::seconds;

volatile int64_t gSink;  // keeps the planned work observable

// One sweep; returns the sum of activation bytes.
int64_t sweep(const JointGraph& g) {
  BudgetPlanner planner(g);
  int64_t bytes = 0;
  for (int i = 0; i <= 20; ++i) bytes += planner.plan(i / 20.0).activationBytes;
  return bytes;
}

void report(const char* label, const JointGraph& g, int repeats) {
  std::vector<double> sweeps, singles;
  int64_t check = 0;
  for (int r = 0; r < repeats; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    check += sweep(g);
    sweeps.push_back(seconds(t0));
    t0 = std::chrono::steady_clock::now();
    check += chooseSavedValues(g, 0.3).activationBytes;
    singles.push_back(seconds(t0));
  }
  const BudgetPlan p = chooseSavedValues(g, 0.3);
  std::printf("%-28s %5d nodes  sweep of 21 budgets %8.2f ms  one plan (b=0.3) %7.2f ms\n", label,
              g.size(), 1e3 * median(sweeps), 1e3 * median(singles));
  gSink = check;
  std::printf("%-28s b=0.3: %s, %zu candidates, %zu saved, %zu recomputed, %.1f MiB kept\n", "",
              std::string(planRouteName(p.route)).c_str(), p.candidates.size(), p.saved.size(),
              p.recomputed.size(), static_cast<double>(p.activationBytes) / 1048576);
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = 5, layers = 48;
  for (int x = 1; x + 1 < argc; x += 2) {
    const std::string k = argv[x];
    if (k == "--repeats") repeats = std::max(1, std::stoi(argv[x + 1]));
    if (k == "--layers") layers = std::max(1, std::stoi(argv[x + 1]));
  }
  report("mm+cos chain, 5 layers", mmCosChain(5, 512), repeats);
  TransformerShape shape;
  shape.layers = layers;
  const std::string label = "transformer-like, " + std::to_string(layers) + " layers";
  report(label.c_str(), transformerLike(shape), repeats);
  return 0;
}
