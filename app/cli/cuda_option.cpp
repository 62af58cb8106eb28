#include "app/cli/cuda_option.h"

#include "app/cli/bad_input_text.h"
#include "core/strategies/prepare_run.h"
#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/cuda_probe.h"

namespace matmulviz::cli {

std::optional<std::string> checkCudaDevice(DType dtype, bool offersMeta) {
  const auto cuda = kernels::probeCuda();
  if (!cuda.available)
    return "--device cuda: CUDA is not available: " + cuda.reason +
           (offersMeta ? ". Use --device cpu (real data) or --device meta (memory only)."
                       : ". Use --device cpu.");
  try {
    checkDTypeOnDevice(dtype, DeviceKind::Cuda);  // the engine's rule (core/strategies)
  } catch (const BadInput& e) {
    throw std::invalid_argument(cliMessage(e));
  }
  return std::nullopt;
}

ComputeDevice parseComputeDevice(const std::string& name, DType dtype) {
  if (name == "cpu") return {};
  if (name != "cuda")
    throw std::invalid_argument("--device: '" + name +
                                "' is not offered here (allowed: cpu, cuda)");
  ComputeDevice d;
  d.noGpu = checkCudaDevice(dtype, false);
  if (!d.noGpu)
    d.factory = [](CachingAllocator::Options o) { return kernels::cuda::makeCudaDevice(o); };
  return d;
}

std::optional<std::string> prepareCudaDevice(RunConfig& config,
                                             const costmodel::GpuProfile* model) {
  if (config.device != DeviceKind::Cuda) return std::nullopt;
  if (auto noGpu = checkCudaDevice(config.workload.dtype, true)) return noGpu;
  kernels::cuda::useCudaDeviceIfAsked(config, model);
  return std::nullopt;
}

}  // namespace matmulviz::cli
