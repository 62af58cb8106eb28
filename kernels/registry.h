#pragma once
// The kernel variants, one numbered file each (01_naive.h ... 04_gather_bmm.h, 08_grouped_bmm.h,
// whose bucketing launches run before its product), with BLAS as the
// reference in the same registry, and three kernels that are wrong on purpose for teaching
// (05_smem_tiled_no_sync.h ... 07_smem_tiled_divergent_barrier.h: a race, out-of-bounds
// accesses, barrier divergence). Each variant knows its launch shape and how to run on the
// simulated launcher; kernels/cuda runs the correct bodies on a GPU, never the faulty ones.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/sim/launcher.h"
#include "kernels/matmul_problem.h"

namespace matmulviz::kernels {

struct KernelVariant {
  std::string_view name;     ///< "naive", as the CLI spells it
  std::string_view file;     ///< "kernels/01_naive.h"
  std::string_view summary;  ///< one line: what changed and why it is faster
  bool reference = false;    ///< BLAS: runs on the host, no grid, no simulation
  bool gathered = false;     ///< multiplies through q (problem.batch, problem.table used)
  /// Wrong on purpose, for teaching: runs only on the simulator, which reports its faults as
  /// diagnostics. Never run on a GPU (it would really race or write out of bounds), never timed.
  bool faulty = false;
  /// Launch shape for `tpb`; throws std::invalid_argument (TPB, CUDA limits). Null for BLAS.
  sim::LaunchConfig (*config)(const MatmulProblem&, int tpb) = nullptr;
  /// Runs on the simulated launcher writing `out` (outputElements long). Null for BLAS.
  sim::LaunchReport (*simulate)(const MatmulProblem&, int tpb, const MatmulInputs&, float* out,
                                const sim::LaunchOptions&) = nullptr;
  /// threadIdx.x / blockIdx.x run over the rows of C (naive: i = blockIdx.x * TPB + threadIdx.x);
  /// false: over its columns (coalesced, the smem_tiled kernels, gather_bmm).
  bool xOverRows = false;
  /// __syncthreads() per TPB-wide tile of K, for kernels that stage tiles of A and B in shared
  /// memory: 2 for smem_tiled (after staging, after the products), 1 for smem_tiled_no_sync
  /// (the second removed). 0 for kernels without shared tiles. The Kernel view reads a block's
  /// barrier phases with it: tile t is staged in phase barriersPerTile * t and its products
  /// are taken in the phase after.
  int barriersPerTile = 0;
};

/// blas, naive, coalesced, smem_tiled, gather_bmm, grouped_bmm, then the faulty smem_tiled_no_sync,
/// naive_no_bounds_check, smem_tiled_divergent_barrier, in that order. Code that runs, times or
/// compares every variant skips the faulty ones.
std::span<const KernelVariant> kernelVariants();

/// The variant called `name`, or nullptr.
const KernelVariant* findKernel(std::string_view name);

/// "naive|coalesced|smem_tiled|gather_bmm|grouped_bmm" (the correct simulated ones; with BLAS first
/// when includeReference, with the faulty teaching kernels last when includeFaulty).
std::string kernelNames(bool includeReference = false, bool includeFaulty = false);

/// "smem_tiled_no_sync|naive_no_bounds_check|smem_tiled_divergent_barrier": the teaching kernels.
std::string faultyKernelNames();

/// grouped_bmm's buckets as its first three launches leave them (kernels/08_grouped_bmm.h).
struct GroupedBuckets {
  std::vector<int> counts;   ///< [table]: the items q sends to each matrix of c
  std::vector<int> offsets;  ///< [table + 1]: bucket m is rows[offsets[m] .. offsets[m + 1])
  std::vector<int> rows;     ///< [batch]: item ids grouped by bucket
};

/// grouped_bmm on the simulator, as its registry entry runs it (problem as for gather_bmm, `in`
/// from makeInputs, `out` batch * M * N floats), handing back its buckets too (the Kernel view
/// draws them). Throws std::invalid_argument for bad sizes or TPB, or c[m] too large for shared
/// memory.
sim::LaunchReport simulateGroupedBmm(const MatmulProblem& problem, int tpb, const MatmulInputs& in,
                                     float* out, const sim::LaunchOptions& options,
                                     GroupedBuckets* buckets);

/// A simulated run with its check against the float64 BLAS reference.
struct SimulatedRun {
  sim::LaunchReport report;
  std::vector<float> out;
  double maxRelErr = 0;
};

/// Makes inputs from `seed`, runs `variant` on the simulator and compares with BLAS in float64.
/// Throws std::invalid_argument for bad sizes, TPB or trace blocks.
SimulatedRun runSimulated(const KernelVariant& variant, const MatmulProblem& problem, int tpb,
                          std::uint64_t seed, const sim::LaunchOptions& options);

}  // namespace matmulviz::kernels
