#include "kernels/registry.h"

#include <stdexcept>

#include "kernels/01_naive.h"
#include "kernels/02_coalesced.h"
#include "kernels/03_smem_tiled.h"
#include "kernels/04_gather_bmm.h"
#include "kernels/05_smem_tiled_no_sync.h"
#include "kernels/06_naive_no_bounds_check.h"
#include "kernels/07_smem_tiled_divergent_barrier.h"
#include "kernels/08_grouped_bmm.h"

namespace matmulviz::kernels {
namespace {

int asInt(std::int64_t v) {
  return static_cast<int>(v);
}

MatmulArgs matmulArgs(const MatmulProblem& p, const MatmulInputs& in, float* out) {
  MatmulArgs args;
  args.a = sim::view2d<const float>(in.a.data(), p.M, p.K, kArrayA, "A");
  args.b = sim::view2d<const float>(in.b.data(), p.K, p.N, kArrayB, "B");
  args.c = sim::view2d<float>(out, p.M, p.N, kArrayC, "C");
  args.M = asInt(p.M);
  args.K = asInt(p.K);
  args.N = asInt(p.N);
  return args;
}

std::vector<sim::ArrayInfo> matmulArrays(const MatmulProblem& p) {
  return {{kArrayA, "A", false, {p.M, p.K}, 4},
          {kArrayB, "B", false, {p.K, p.N}, 4},
          {kArrayC, "C", false, {p.M, p.N}, 4}};
}

sim::LaunchConfig naiveShape(const MatmulProblem& p, int tpb) {
  validate(p, false);
  return naiveConfig(asInt(p.M), asInt(p.N), tpb);
}
sim::LaunchConfig coalescedShape(const MatmulProblem& p, int tpb) {
  validate(p, false);
  return coalescedConfig(asInt(p.M), asInt(p.N), tpb);
}
sim::LaunchConfig smemTiledShape(const MatmulProblem& p, int tpb) {
  validate(p, false);
  return smemTiledConfig(asInt(p.M), asInt(p.N), tpb);
}
sim::LaunchConfig gatherBmmShape(const MatmulProblem& p, int tpb) {
  validate(p, true);
  return gatherBmmConfig(asInt(p.batch), asInt(p.M), asInt(p.N), tpb);
}

sim::LaunchReport simulateNaive(const MatmulProblem& p, int tpb, const MatmulInputs& in, float* out,
                                const sim::LaunchOptions& options) {
  const MatmulArgs args = matmulArgs(p, in, out);
  return sim::launch(naiveShape(p, tpb), matmulArrays(p), options,
                     [&](auto& ctx) { naiveMatmul(ctx, args); });
}

sim::LaunchReport simulateCoalesced(const MatmulProblem& p, int tpb, const MatmulInputs& in,
                                    float* out, const sim::LaunchOptions& options) {
  const MatmulArgs args = matmulArgs(p, in, out);
  return sim::launch(coalescedShape(p, tpb), matmulArrays(p), options,
                     [&](auto& ctx) { coalescedMatmul(ctx, args); });
}

/// Runs a body taking (ctx, MatmulArgs, SmemTiles) with 03's launch shape and tiles.
template <class Kernel>
sim::LaunchReport simulateTiled(const MatmulProblem& p, int tpb, const MatmulInputs& in, float* out,
                                const sim::LaunchOptions& options, Kernel kernel) {
  const MatmulArgs args = matmulArgs(p, in, out);
  std::vector<sim::ArrayInfo> arrays = matmulArrays(p);
  arrays.push_back({kArrayAs, "As", true, {tpb, tpb}, 4});
  arrays.push_back({kArrayBs, "Bs", true, {tpb, tpb}, 4});
  return sim::launch(smemTiledShape(p, tpb), std::move(arrays), options, [&](auto& ctx) {
    const SmemTiles tiles = SmemTiles::carve(ctx.sharedMemory(), tpb);
    kernel(ctx, args, tiles);
  });
}

sim::LaunchReport simulateSmemTiled(const MatmulProblem& p, int tpb, const MatmulInputs& in,
                                    float* out, const sim::LaunchOptions& options) {
  return simulateTiled(p, tpb, in, out, options,
                       [](auto& ctx, const MatmulArgs& args, const SmemTiles& tiles) {
                         smemTiledMatmul(ctx, args, tiles);
                       });
}

sim::LaunchReport simulateSmemTiledNoSync(const MatmulProblem& p, int tpb, const MatmulInputs& in,
                                          float* out, const sim::LaunchOptions& options) {
  return simulateTiled(p, tpb, in, out, options,
                       [](auto& ctx, const MatmulArgs& args, const SmemTiles& tiles) {
                         smemTiledNoSyncMatmul(ctx, args, tiles);
                       });
}

sim::LaunchReport simulateSmemTiledDivergentBarrier(const MatmulProblem& p, int tpb,
                                                    const MatmulInputs& in, float* out,
                                                    const sim::LaunchOptions& options) {
  return simulateTiled(p, tpb, in, out, options,
                       [](auto& ctx, const MatmulArgs& args, const SmemTiles& tiles) {
                         smemTiledDivergentBarrierMatmul(ctx, args, tiles);
                       });
}

sim::LaunchReport simulateNaiveNoBoundsCheck(const MatmulProblem& p, int tpb,
                                             const MatmulInputs& in, float* out,
                                             const sim::LaunchOptions& options) {
  const MatmulArgs args = matmulArgs(p, in, out);
  return sim::launch(naiveShape(p, tpb), matmulArrays(p), options,
                     [&](auto& ctx) { naiveNoBoundsCheckMatmul(ctx, args); });
}

GatherBmmArgs gatherArgs(const MatmulProblem& p, const MatmulInputs& in, float* out) {
  return gatherBmmArgs(in.a.data(), in.b.data(), in.q.data(), out, asInt(p.batch), asInt(p.M),
                       asInt(p.K), asInt(p.N), asInt(p.table));
}

std::vector<sim::ArrayInfo> gatherArrays(const MatmulProblem& p) {
  return {{kArrayA, "a", false, {p.batch, p.M, p.K}, 4},
          {kArrayB, "c", false, {p.table, p.K, p.N}, 4},
          {kArrayC, "out", false, {p.batch, p.M, p.N}, 4},
          {kArrayQ, "q", false, {p.batch}, 8}};
}

sim::LaunchReport simulateGatherBmm(const MatmulProblem& p, int tpb, const MatmulInputs& in,
                                    float* out, const sim::LaunchOptions& options) {
  const GatherBmmArgs args = gatherArgs(p, in, out);
  return sim::launch(gatherBmmShape(p, tpb), gatherArrays(p), options,
                     [&](auto& ctx) { gatherBmm(ctx, args); });
}

GroupedBmmConfigs groupedBmmShapes(const MatmulProblem& p, int tpb) {
  validate(p, true);
  return GroupedBmmConfigs::of(asInt(p.batch), asInt(p.K), asInt(p.N), asInt(p.table), tpb);
}
sim::LaunchConfig groupedBmmShape(const MatmulProblem& p, int tpb) {
  return groupedBmmShapes(p, tpb).grouped;
}

/// Lists `priors` (in launch order) among main's prior launches: their diagnostics come first
/// (within maxDiagnostics) and count in main's totals.
void mergePriors(sim::LaunchReport& main, std::vector<sim::LaunchReport>&& priors,
                 std::size_t maxDiagnostics) {
  std::vector<sim::Diagnostic> diagnostics;
  for (sim::LaunchReport& prior : priors) {
    for (sim::Diagnostic& d : prior.diagnostics) diagnostics.push_back(std::move(d));
    main.diagnosticCounts.outOfBounds += prior.diagnosticCounts.outOfBounds;
    main.diagnosticCounts.barrierDivergence += prior.diagnosticCounts.barrierDivergence;
    main.diagnosticCounts.sharedRaces += prior.diagnosticCounts.sharedRaces;
    main.priorLaunches.push_back({prior.kernel, prior.config, prior.stats});
  }
  for (sim::Diagnostic& d : main.diagnostics) diagnostics.push_back(std::move(d));
  if (diagnostics.size() > maxDiagnostics) diagnostics.resize(maxDiagnostics);
  main.diagnostics = std::move(diagnostics);
}

/// 08's four launches. The bucketing runs on one host thread, untraced: the scatter's atomicAdd
/// hands out places in the order threads arrive, which only one thread running the blocks in
/// order keeps the same from run to run. The grouped product, the costly launch, is the one
/// reported (traced, on every host thread); the three before it are its prior launches.
sim::LaunchReport simulateGrouped(const MatmulProblem& p, int tpb, const MatmulInputs& in,
                                  float* out, const sim::LaunchOptions& options,
                                  GroupedBuckets* buckets) {
  const GroupedBmmConfigs configs = groupedBmmShapes(p, tpb);
  std::vector<int> ints(static_cast<std::size_t>(GroupedBmmWorkspace::ints(p.batch, p.table)), 0);
  const GroupedBmmArgs args = groupedBmmArgs(gatherArgs(p, in, out), ints.data());
  std::vector<sim::ArrayInfo> arrays = gatherArrays(p);
  arrays.push_back({kArrayCounts, "counts", false, {p.table}, 4});
  arrays.push_back({kArrayOffsets, "offsets", false, {p.table + 1}, 4});
  arrays.push_back({kArrayCursor, "cursor", false, {p.table}, 4});
  arrays.push_back({kArrayRows, "rows", false, {p.batch}, 4});
  arrays.push_back({kArraySums, "sums", true, {2, tpb * tpb}, 4});
  arrays.push_back({kArrayCs, "cs", true, {p.K, p.N}, 4});

  sim::LaunchOptions bucketing = options;
  bucketing.threads = 1;
  bucketing.trace = false;
  bucketing.traceBlocks.clear();
  const std::string name = options.kernel;
  std::vector<sim::LaunchReport> priors;
  bucketing.kernel = name + " histogram";
  priors.push_back(sim::launch(configs.histogram, arrays, bucketing,
                               [&](auto& ctx) { groupHistogram(ctx, args); }));
  bucketing.kernel = name + " offsets";
  priors.push_back(
      sim::launch(configs.offsets, arrays, bucketing, [&](auto& ctx) { groupOffsets(ctx, args); }));
  bucketing.kernel = name + " scatter";
  priors.push_back(
      sim::launch(configs.scatter, arrays, bucketing, [&](auto& ctx) { groupScatter(ctx, args); }));
  sim::LaunchReport report = sim::launch(configs.grouped, std::move(arrays), options,
                                         [&](auto& ctx) { groupedBmm(ctx, args); });
  mergePriors(report, std::move(priors), options.maxDiagnostics);
  if (buckets != nullptr) {
    const auto part = [&](const sim::GlobalView<int>& v) {
      return std::vector<int>(v.data, v.data + v.sizes[0]);
    };
    *buckets = {part(args.counts), part(args.offsets), part(args.rows)};
  }
  return report;
}

sim::LaunchReport simulateGroupedBmmVariant(const MatmulProblem& p, int tpb, const MatmulInputs& in,
                                            float* out, const sim::LaunchOptions& options) {
  return simulateGrouped(p, tpb, in, out, options, nullptr);
}

constexpr KernelVariant kVariants[] = {
    {"blas", "kernels/matmul_problem.cpp",
     "the reference: OpenBLAS sgemm on the host (cuBLAS on a GPU)", true, false, false, nullptr,
     nullptr},
    {"naive", "kernels/01_naive.h",
     "the lesson's kernel: thread (i, j) computes C[i, j], x over rows, 2K global loads per thread",
     false, false, false, naiveShape, simulateNaive, true, 0},
    {"coalesced", "kernels/02_coalesced.h",
     "x over columns: a warp's loads of B and stores of C are consecutive (coalesced)", false,
     false, false, coalescedShape, simulateCoalesced, false, 0},
    {"smem_tiled", "kernels/03_smem_tiled.h",
     "TPB x TPB tiles of A and B in shared memory between barriers: TPB-fold reuse of each load",
     false, false, false, smemTiledShape, simulateSmemTiled, false, 2},
    {"gather_bmm", "kernels/04_gather_bmm.h",
     "out[n] = a[n] @ c[q[n]] reading c through q in place: no [N, J, K] copy of c[q]", false, true,
     false, gatherBmmShape, simulateGatherBmm, false, 0},
    {"grouped_bmm", "kernels/08_grouped_bmm.h",
     "items bucketed by q on the device, then one block per c[m], kept in shared memory, "
     "multiplies every row routed to it: c read once",
     false, true, false, groupedBmmShape, simulateGroupedBmmVariant, false, 0},
    // Wrong on purpose, for teaching: the simulator reports what each gets wrong.
    {"smem_tiled_no_sync", "kernels/05_smem_tiled_no_sync.h",
     "faulty on purpose: smem_tiled without the barrier after the inner product, a shared-memory "
     "race",
     false, false, true, smemTiledShape, simulateSmemTiledNoSync, false, 1},
    {"naive_no_bounds_check", "kernels/06_naive_no_bounds_check.h",
     "faulty on purpose: naive without `if (i < M && j < N)`, idle threads access out of bounds",
     false, false, true, naiveShape, simulateNaiveNoBoundsCheck, true, 0},
    {"smem_tiled_divergent_barrier", "kernels/07_smem_tiled_divergent_barrier.h",
     "faulty on purpose: smem_tiled with its barriers inside `if (i < M && j < N)`, barrier "
     "divergence",
     false, false, true, smemTiledShape, simulateSmemTiledDivergentBarrier, false, 2},
};

}  // namespace

std::span<const KernelVariant> kernelVariants() {
  return kVariants;
}

const KernelVariant* findKernel(std::string_view name) {
  for (const KernelVariant& v : kVariants) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

namespace {

/// The names of the variants `keep` accepts, in registry order, joined by '|'.
template <class Keep>
std::string joinNames(Keep keep) {
  std::string names;
  for (const KernelVariant& v : kVariants) {
    if (!keep(v)) continue;
    if (!names.empty()) names += '|';
    names += v.name;
  }
  return names;
}

}  // namespace

std::string kernelNames(bool includeReference, bool includeFaulty) {
  return joinNames([&](const KernelVariant& v) {
    return (includeReference || !v.reference) && (includeFaulty || !v.faulty);
  });
}

std::string faultyKernelNames() {
  return joinNames([](const KernelVariant& v) { return v.faulty; });
}

sim::LaunchReport simulateGroupedBmm(const MatmulProblem& problem, int tpb, const MatmulInputs& in,
                                     float* out, const sim::LaunchOptions& options,
                                     GroupedBuckets* buckets) {
  return simulateGrouped(problem, tpb, in, out, options, buckets);
}

SimulatedRun runSimulated(const KernelVariant& variant, const MatmulProblem& problem, int tpb,
                          std::uint64_t seed, const sim::LaunchOptions& options) {
  if (variant.simulate == nullptr) {
    throw std::invalid_argument("kernel " + std::string(variant.name) +
                                " is the BLAS reference and has no simulated launch");
  }
  variant.config(problem, tpb);  // validates sizes, TPB and the grid before allocating inputs
  const MatmulInputs in = makeInputs(problem, variant.gathered, seed);
  SimulatedRun run;
  run.out.assign(static_cast<std::size_t>(outputElements(problem, variant.gathered)), 0.f);
  sim::LaunchOptions opts = options;
  opts.kernel = std::string(variant.name);
  run.report = variant.simulate(problem, tpb, in, run.out.data(), opts);
  run.maxRelErr = maxRelErr(run.out.data(), referenceMatmul(problem, variant.gathered, in));
  return run;
}

}  // namespace matmulviz::kernels
