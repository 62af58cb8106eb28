#pragma once
// One simulated kernel launch for the Kernel view: what was asked (KernelLaunchSpec), where each
// cell of C lives in the grid (KernelGeometry), and the simulator's report with the trace of the
// one block the view animates (KernelLaunchResult). Qt Core only: numbers and strings.
//
//   auto result = simulateKernelLaunch({"naive", 5, 784, 10, 16}, /*tracedBlock=*/0);
//   result->run.report.stats.activeThreads;  // 50 of 256

#include <QString>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "kernels/registry.h"

namespace matmulviz::ui {

/// A launch as the user asks for it: C[m, n] = A[m, k] @ B[k, n] with `kernel` in TPB x TPB
/// blocks, inputs drawn from `seed` (kernels::makeInputs).
struct KernelLaunchSpec {
  QString kernel = QStringLiteral("naive");
  int m = 5;
  int k = 784;
  int n = 10;
  int tpb = 16;
  quint64 seed = 0;
  bool operator==(const KernelLaunchSpec&) const = default;
};

/// What the interactive view accepts (the CLI only has CUDA's limits): each size in
/// 1..maxDim, TPB in 1..32, and a launch small enough to keep in memory and simulate in seconds.
struct KernelLaunchLimits {
  static constexpr int maxDim = 100000;                              ///< M, K, N each
  static constexpr int maxTpb = 32;                                  ///< TPB^2 <= 1024 threads
  static constexpr std::int64_t maxOutputs = std::int64_t{1} << 24;  ///< M * N
  static constexpr std::int64_t maxInputElements = std::int64_t{1} << 26;  ///< M*K, K*N
  static constexpr double maxFmas = 4e9;  ///< M * N * K: about 10 s of simulation
};

/// The kernels the A/B/C diagram can show: naive, coalesced, smem_tiled, then the teaching
/// kernels that are wrong on purpose (smem_tiled_no_sync, naive_no_bounds_check,
/// smem_tiled_divergent_barrier), whose diagnostics the view draws on the cells. gather_bmm is
/// batched (a [N, I, J] @ c[q[n]]) and has no single A/B/C picture, so the view leaves it out.
QStringList kernelViewKernels();

/// Kernel 08, batched like gather_bmm, which the Kernel view draws in a picture of its own
/// (its buckets and shared tile: ui/widgets/grouped_bmm_panel.h) rather than on A/B/C.
inline constexpr const char* kGroupedKernel = "grouped_bmm";

/// The batched kernels (kernels::KernelVariant::gathered) without a picture in the view
/// (gather_bmm), which the view lists but cannot draw, in registry order.
QStringList batchedKernels();
/// Why the Kernel view does not show `kernel` (batched) and how to run it instead.
QString batchedKernelNote(const QString& kernel);

/// Whether `kernel` is one of the faulty teaching kernels (kernels::KernelVariant::faulty).
bool isFaultyKernel(const QString& kernel);

/// What a kernel combo shows for `kernel`: the name, with " (faulty, for teaching)" after a
/// faulty one. The item's data stays the plain name.
QString kernelItemText(const QString& kernel);

/// Empty when the view can simulate `spec`; else one sentence naming the field and what is
/// allowed ("M = 0: sizes must be in 1..100000").
QString checkKernelLaunch(const KernelLaunchSpec& spec);

/// Where C's cells live in the launch. The plane of thread positions covers C and the idle
/// threads past its edges: planeRows() x planeCols() = (blocks along rows * TPB) x (... cols).
/// naive (and naive_no_bounds_check) put threadIdx.x / blockIdx.x over the rows of C
/// (i = blockIdx.x * TPB + threadIdx.x); coalesced and the smem_tiled kernels put x over the
/// columns (j = blockIdx.x * TPB + threadIdx.x). Both that and the barrier phases of the
/// tiled kernels come from the kernel's registry entry (kernels::KernelVariant).
struct KernelGeometry {
  std::int64_t M = 1;
  std::int64_t K = 1;
  std::int64_t N = 1;
  int tpb = 1;
  bool xOverRows = true;   ///< naive: x runs over the rows of C
  std::int64_t gridX = 1;  ///< gridDim.x
  std::int64_t gridY = 1;  ///< gridDim.y
  bool tiled = false;      ///< stages TPB x TPB tiles of A and B in shared memory
  /// __syncthreads() per tile (KernelVariant::barriersPerTile): 2 for smem_tiled, 1 for
  /// smem_tiled_no_sync; 0 when not tiled.
  int barriersPerTile = 0;

  /// The geometry of a launch that checkKernelLaunch accepted.
  static KernelGeometry of(const KernelLaunchSpec& spec);

  std::int64_t blockRows() const { return xOverRows ? gridX : gridY; }  ///< blocks down C
  std::int64_t blockCols() const { return xOverRows ? gridY : gridX; }  ///< blocks across C
  std::int64_t planeRows() const { return blockRows() * tpb; }
  std::int64_t planeCols() const { return blockCols() * tpb; }
  std::uint64_t blocks() const { return static_cast<std::uint64_t>(gridX * gridY); }
  int threadsPerBlock() const { return tpb * tpb; }
  /// ceil(K / TPB): tiles of A and B a tiled block stages.
  std::int64_t tilePhases() const { return (K + tpb - 1) / tpb; }
  /// The barrier phase in which `tile` is staged into As and Bs (barriersPerTile * tile).
  int stagePhase(int tile) const { return barriersPerTile * tile; }
  /// The phase in which the products of `tile` are taken: the one after its staging.
  int computePhase(int tile) const { return stagePhase(tile) + 1; }
  /// The tile staged in `phase`, or -1 (not tiled, a phase that stages nothing).
  int tileStagedIn(int phase) const;
  /// The tile whose products are taken in `phase`, or -1.
  int tileComputedIn(int phase) const;
  bool inC(std::int64_t row, std::int64_t col) const {
    return row >= 0 && col >= 0 && row < M && col < N;
  }

  struct BlockThread {
    std::int64_t bx = 0;  ///< blockIdx.x
    std::int64_t by = 0;  ///< blockIdx.y
    int tx = 0;           ///< threadIdx.x
    int ty = 0;           ///< threadIdx.y
  };
  /// blockIdx and threadIdx of the thread at plane position (row, col).
  BlockThread at(std::int64_t row, std::int64_t col) const;
  /// Linear block id as the launcher counts it (x fastest).
  std::uint64_t linearBlock(std::int64_t bx, std::int64_t by) const {
    return static_cast<std::uint64_t>(by * gridX + bx);
  }
  std::int64_t blockX(std::uint64_t linear) const {
    return static_cast<std::int64_t>(linear % static_cast<std::uint64_t>(gridX));
  }
  std::int64_t blockY(std::uint64_t linear) const {
    return static_cast<std::int64_t>(linear / static_cast<std::uint64_t>(gridX));
  }
  /// Plane row and column of thread `thread` (linear, x fastest) of block `block` (linear).
  std::int64_t rowOf(std::uint64_t block, int thread) const;
  std::int64_t colOf(std::uint64_t block, int thread) const;
  /// First plane row / column of a block.
  std::int64_t blockRow0(std::uint64_t block) const;
  std::int64_t blockCol0(std::uint64_t block) const;
};

/// A finished simulation: the spec, its geometry and the simulator's run, whose trace holds the
/// events of `tracedBlock` only (up to the cap; report.trace.dropped() counts the rest).
struct KernelLaunchResult {
  KernelLaunchSpec spec;
  KernelGeometry geometry;
  QString file;     ///< "kernels/01_naive.h"
  QString summary;  ///< what this variant changed and why it is faster
  std::uint64_t tracedBlock = 0;
  kernels::SimulatedRun run;  ///< report (stats, diagnostics, trace), out [M, N], maxRelErr
};

/// Trace memory the view allows for one block (a TPB 32 block with K = 784 needs ~32 MiB).
constexpr std::size_t kKernelTraceCapBytes = std::size_t{64} << 20;

/// Runs `spec` on the simulated launcher, tracing only block `tracedBlock` (linear, x fastest)
/// within `traceCapBytes`. Safe to call from a worker thread. Throws std::invalid_argument with
/// checkKernelLaunch's message or the launcher's, std::bad_alloc when memory runs out.
std::shared_ptr<const KernelLaunchResult> simulateKernelLaunch(
    const KernelLaunchSpec& spec, std::uint64_t tracedBlock,
    std::size_t traceCapBytes = kKernelTraceCapBytes);

}  // namespace matmulviz::ui
