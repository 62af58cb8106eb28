#pragma once
// --device cuda for the commands that run the engine (`strategies`, `export`, `multihead`,
// `einsum`): one check, so that all refuse the same things with the same words before any work.

#include <optional>
#include <string>

#include "core/costmodel/cost_model.h"
#include "core/strategies/runner.h"

namespace matmulviz::cli {

/// For a command asked to compute on the cuda device: checks that a GPU answers
/// (kernels::probeCuda) and that the engine computes `dtype` on a GPU (float32 only for now).
/// Returns the message to print, with exit status 1, when no GPU answers (naming --device meta
/// as an alternative when the command `offersMeta`); std::nullopt otherwise.
/// Throws std::invalid_argument (exit status 2) for a dtype the GPU path does not compute.
std::optional<std::string> checkCudaDevice(DType dtype, bool offersMeta);

/// The run's device of a command that offers `--device cpu|cuda` (`multihead`, `einsum`).
struct ComputeDevice {
  DeviceFactory factory;             ///< empty: the cpu device
  std::optional<std::string> noGpu;  ///< cuda was asked and no GPU answers: print, exit 1
};

/// Parses `--device` ("cpu" or "cuda") for such a command; for cuda, checkCudaDevice(dtype) and
/// a factory of kernels::cuda::makeCudaDevice. Throws std::invalid_argument (exit status 2) for
/// another name and as checkCudaDevice.
ComputeDevice parseComputeDevice(const std::string& name, DType dtype);

/// When `config` asks for the cuda device: checkCudaDevice(the workload's dtype), then has the
/// runner make each run's device on the GPU and estimate backwards at `model`'s bandwidth (or
/// the profile the GPU's name names: kernels::cuda::useCudaDeviceIfAsked). Leaves any other
/// device alone. Returns and throws as checkCudaDevice (strategies offer meta too).
std::optional<std::string> prepareCudaDevice(RunConfig& config,
                                             const costmodel::GpuProfile* model = nullptr);

}  // namespace matmulviz::cli
