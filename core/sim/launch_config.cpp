#include "core/sim/launch_config.h"

#include <stdexcept>
#include <string>

namespace matmulviz::sim {
namespace {

void checkDim(const char* what, std::uint64_t value, std::uint64_t limit) {
  if (value == 0 || value > limit) {
    throw std::invalid_argument(std::string(what) + " = " + std::to_string(value) +
                                " is outside CUDA's limit of 1.." + std::to_string(limit));
  }
}

}  // namespace

void validate(const LaunchConfig& config) {
  checkDim("blockDim.x", config.blockDim.x, CudaLimits::maxBlockDimX);
  checkDim("blockDim.y", config.blockDim.y, CudaLimits::maxBlockDimY);
  checkDim("blockDim.z", config.blockDim.z, CudaLimits::maxBlockDimZ);
  if (config.threadsPerBlock() > CudaLimits::maxThreadsPerBlock) {
    throw std::invalid_argument("blockDim x*y*z = " + std::to_string(config.threadsPerBlock()) +
                                " threads per block exceeds CUDA's limit of 1024");
  }
  checkDim("gridDim.x", config.gridDim.x, CudaLimits::maxGridDimX);
  checkDim("gridDim.y", config.gridDim.y, CudaLimits::maxGridDimY);
  checkDim("gridDim.z", config.gridDim.z, CudaLimits::maxGridDimZ);
  if (config.sharedBytes > CudaLimits::maxSharedBytesPerBlock) {
    throw std::invalid_argument("dynamic shared memory of " + std::to_string(config.sharedBytes) +
                                " bytes per block exceeds the 49152 bytes (48 KiB) a launch gets");
  }
}

LaunchConfig grid2d(std::int64_t extentX, std::int64_t extentY, int tpb, std::size_t sharedBytes) {
  if (tpb < 1 || tpb > 32) {
    throw std::invalid_argument("tpb = " + std::to_string(tpb) +
                                ": threads per block side must be 1..32 (TPB x TPB <= 1024 "
                                "threads per block, CUDA's limit)");
  }
  if (extentX < 1 || extentY < 1) {
    throw std::invalid_argument("the launch covers " + std::to_string(extentX) + " x " +
                                std::to_string(extentY) + " threads; both must be at least 1");
  }
  const std::uint64_t gx = blocksFor(extentX, tpb);
  const std::uint64_t gy = blocksFor(extentY, tpb);
  checkDim("gridDim.x", gx, CudaLimits::maxGridDimX);
  checkDim("gridDim.y", gy, CudaLimits::maxGridDimY);
  LaunchConfig config;
  config.gridDim = Dim3{static_cast<unsigned>(gx), static_cast<unsigned>(gy), 1};
  config.blockDim = Dim3{static_cast<unsigned>(tpb), static_cast<unsigned>(tpb), 1};
  config.sharedBytes = sharedBytes;
  validate(config);
  return config;
}

}  // namespace matmulviz::sim
