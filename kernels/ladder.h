#pragma once
// The speed ladder of the fast.ai lesson "Finishing up Matmul": the same product C[M, N] = A[M, K]
// @ B[K, N], float32, computed the slow way first and then faster and faster, each rung timed and
// checked against a float64 reference:
//
//   simulated    the naive kernel on the simulated launcher, one CUDA thread at a time on each
//                host thread (LadderOptions::simThreads, every core by default)
//   loop         a plain C++ triple loop
//   einsum       the engine's einsum("ik,kj->ij", {A, B}) (core/ops/einsum.h), as torch.einsum
//   blas         one OpenBLAS sgemm (core/util/blas.h)
//   cuda_naive, cuda_coalesced, cuda_smem_tiled   the kernel variants on a GPU (CUDA events)
//   cublas       one cublasSgemm
//
// The CUDA rungs run where a device answers (kernels/cuda/cuda_probe.h) and are skipped, with
// the reason, elsewhere. The GUI charts the rungs; `matmulviz-cli ladder` prints them.

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace matmulviz::kernels {

struct LadderOptions {
  std::int64_t M = 50000;  ///< the lesson's x_train: 50000 images of 28 x 28
  std::int64_t K = 784;
  std::int64_t N = 10;     ///< ten classes
  int tpb = 16;            ///< threads per block side of the kernels, 1..32
  std::uint64_t seed = 0;  ///< inputs: uniform in [-1, 1) from this seed (makeInputs)
  int repeats = 3;         ///< timed runs per rung (>= 1); a rung's time is their median
  bool cuda = true;        ///< run the GPU rungs when a device answers
  /// Host threads of the simulated rung (sim::LaunchOptions::threads): 0 one per core.
  unsigned simThreads = 0;
};

struct LadderRung {
  std::string name;      ///< "simulated", "loop", "einsum", "blas", "cuda_naive", ..., "cublas"
  std::string what;      ///< one line: what runs and how it is timed
  bool ok = false;       ///< false: skipped (see `skipped`)
  std::string skipped;   ///< why it did not run (no GPU, cancelled, an error)
  double seconds = 0;    ///< median over the repeats, seconds (wall; CUDA events on a GPU)
  double gflops = 0;     ///< 2 M N K / seconds / 1e9
  double speedup = 0;    ///< seconds of the previous rung that ran / seconds; 0 for the first
  double maxRelErr = 0;  ///< max|out - ref| / max|ref| against the float64 product
};

struct LadderReport {
  LadderOptions options;
  std::vector<LadderRung> rungs;  ///< slowest first, in the order above
  std::string gpu;                ///< the device's name, or why there is none
  int blasThreads = 1;            ///< threads OpenBLAS used
  unsigned simThreads = 1;        ///< host threads the simulated rung used
};

/// Called after each rung: its index, how many rungs there are, and the rung (ok or skipped).
using LadderProgress = std::function<void(std::size_t index, std::size_t count, const LadderRung&)>;

/// Throws std::invalid_argument for sizes below 1 or beyond int32 indexing, TPB outside 1..32
/// (or a grid beyond CUDA's limits), or repeats below 1.
void validateLadder(const LadderOptions& options);

/// Runs the ladder. Validates everything before the first rung (validateLadder). `cancel` (may be
/// null) is read between rungs and between repeats: once set, the remaining rungs are skipped as
/// "cancelled". A rung that throws (std::bad_alloc, a CUDA error) is skipped with the error's
/// message; the others run. Memory: A, B and C in float32 twice (the engine's einsum holds its own
/// copies) and the float64 reference, about 12 (M K + K N + M N) bytes.
LadderReport runLadder(const LadderOptions& options, const LadderProgress& progress = {},
                       const std::atomic<bool>* cancel = nullptr);

/// The FLOPs of the product, 2 M N K.
double ladderFlops(const LadderOptions& options);

}  // namespace matmulviz::kernels
