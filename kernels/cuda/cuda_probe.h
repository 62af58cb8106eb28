#pragma once
// Whether a CUDA device answers, and if not, exactly why.

#include <string>
#include <vector>

namespace matmulviz::kernels {

/// What the CUDA runtime says about this machine.
struct CudaStatus {
  bool compiled = false;   ///< the CUDA backend was compiled into this binary
  bool available = false;  ///< at least one device answered
  std::string reason;      ///< why not available (runtime error name and text), empty if available
  int runtimeVersion = 0;  ///< cudaRuntimeGetVersion, e.g. 13000
  int driverVersion = 0;   ///< cudaDriverGetVersion, 0 when no driver is installed
  std::vector<std::string> deviceNames;  ///< "NVIDIA H100 80GB HBM3 (sm_90, 79.1 GiB)"
};

/// Asks the CUDA runtime for devices. Never throws; errors become CudaStatus::reason.
CudaStatus probeCuda();

}  // namespace matmulviz::kernels
