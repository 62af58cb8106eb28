#include "app/cli/cuda_option.h"

#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/cuda_probe.h"

namespace matmulviz::cli {

std::optional<std::string> prepareCudaDevice(RunConfig& config) {
  if (config.device != DeviceKind::Cuda) return std::nullopt;
  const auto cuda = kernels::probeCuda();
  if (!cuda.available)
    return "--device cuda: CUDA is not available: " + cuda.reason +
           ". Use --device cpu (real data) or --device meta (memory only).";
  if (config.workload.dtype != DType::Float32)
    throw std::invalid_argument("--dtype " + std::string(dtypeName(config.workload.dtype)) +
                                ": the engine computes on a CUDA device in float32 only for "
                                "now; use --device cpu for 16-bit dtypes");
  kernels::cuda::useCudaDeviceIfAsked(config);
  return std::nullopt;
}

}  // namespace matmulviz::cli
