#pragma once
// The kernel variants, one numbered file each (01_naive.h ... 04_gather_bmm.h), with BLAS as the
// reference in the same registry. Each variant knows its launch shape and how to run on the
// simulated launcher; kernels/cuda runs the same bodies on a GPU.

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
  /// Launch shape for `tpb`; throws std::invalid_argument (TPB, CUDA limits). Null for BLAS.
  sim::LaunchConfig (*config)(const MatmulProblem&, int tpb) = nullptr;
  /// Runs on the simulated launcher writing `out` (outputElements long). Null for BLAS.
  sim::LaunchReport (*simulate)(const MatmulProblem&, int tpb, const MatmulInputs&, float* out,
                                const sim::LaunchOptions&) = nullptr;
};

/// blas, naive, coalesced, smem_tiled, gather_bmm, in that order.
std::span<const KernelVariant> kernelVariants();

/// The variant called `name`, or nullptr.
const KernelVariant* findKernel(std::string_view name);

/// "naive|coalesced|smem_tiled|gather_bmm" (simulated ones; with BLAS when includeReference).
std::string kernelNames(bool includeReference = false);

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
