#include "kernels/cuda/cuda_probe.h"

#include <cuda_runtime.h>

#include <cstdio>

namespace matmulviz::kernels {

CudaStatus probeCuda() {
  CudaStatus status;
  status.compiled = true;
  cudaRuntimeGetVersion(&status.runtimeVersion);
  if (cudaDriverGetVersion(&status.driverVersion) != cudaSuccess || status.driverVersion == 0) {
    status.reason = "no NVIDIA driver is installed (cudaDriverGetVersion reports none)";
    return status;
  }
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    status.reason = std::string("cudaGetDeviceCount failed: ") + cudaGetErrorName(err) + " (" +
                    cudaGetErrorString(err) + ")";
    return status;
  }
  if (count == 0) {
    status.reason = "the driver answers but reports no CUDA device";
    return status;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    char line[512];
    std::snprintf(line, sizeof line, "%s (sm_%d%d, %.1f GiB)", prop.name, prop.major, prop.minor,
                  static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0));
    status.deviceNames.emplace_back(line);
  }
  status.available = true;
  return status;
}

}  // namespace matmulviz::kernels
