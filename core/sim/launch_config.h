#pragma once
// The shape of a kernel launch (gridDim, blockDim, dynamic shared memory) and CUDA's limits on it.

#include <cstddef>
#include <cstdint>

#include "core/sim/views.h"

namespace matmulviz::sim {

/// CUDA's per-launch limits for compute capability 7.0 to 9.0 (CUDA C++ Programming Guide,
/// "Features and Technical Specifications", table "Technical Specifications per Compute
/// Capability"). Shared memory: the 48 KiB a launch gets without opting in.
struct CudaLimits {
  static constexpr std::uint64_t maxThreadsPerBlock = 1024;
  static constexpr std::uint64_t maxBlockDimX = 1024;
  static constexpr std::uint64_t maxBlockDimY = 1024;
  static constexpr std::uint64_t maxBlockDimZ = 64;
  static constexpr std::uint64_t maxGridDimX = 2147483647;  // 2^31 - 1
  static constexpr std::uint64_t maxGridDimY = 65535;
  static constexpr std::uint64_t maxGridDimZ = 65535;
  static constexpr std::uint64_t maxSharedBytesPerBlock = 48 * 1024;
};

struct LaunchConfig {
  Dim3 gridDim;
  Dim3 blockDim;
  std::size_t sharedBytes = 0;  ///< dynamic shared memory per block, bytes

  std::uint64_t blocks() const { return std::uint64_t{gridDim.x} * gridDim.y * gridDim.z; }
  std::uint64_t threadsPerBlock() const {
    return std::uint64_t{blockDim.x} * blockDim.y * blockDim.z;
  }
  std::uint64_t threads() const { return blocks() * threadsPerBlock(); }
};

/// Throws std::invalid_argument naming the field and CUDA's limit when `config` is not a launch
/// CUDA would accept (a zero or too large dimension, more than 1024 threads per block, more
/// than 48 KiB of shared memory).
void validate(const LaunchConfig& config);

/// Number of blocks of `tpb` threads that cover `extent` elements: ceil(extent / tpb).
constexpr std::uint64_t blocksFor(std::int64_t extent, int tpb) {
  return (static_cast<std::uint64_t>(extent) + static_cast<std::uint64_t>(tpb) - 1) /
         static_cast<std::uint64_t>(tpb);
}

/// A 2-D launch of `tpb x tpb` blocks covering `extentX x extentY` threads, as in the lesson:
/// blockspergrid = (ceil(extentX / TPB), ceil(extentY / TPB)). Throws std::invalid_argument when
/// tpb is not in 1..32 (tpb^2 <= 1024 threads) or the grid exceeds CUDA's limits.
LaunchConfig grid2d(std::int64_t extentX, std::int64_t extentY, int tpb,
                    std::size_t sharedBytes = 0);

}  // namespace matmulviz::sim
