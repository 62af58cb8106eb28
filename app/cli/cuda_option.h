#pragma once
// --device cuda for the commands that run the engine's strategies (`strategies`, `export`): one
// check, so that both refuse the same things with the same words before any work is done.

#include <optional>
#include <string>

#include "core/strategies/runner.h"

namespace matmulviz::cli {

/// When `config` asks for the cuda device: checks that a GPU answers (kernels::probeCuda) and
/// that the engine computes the workload's dtype on a GPU (float32 only for now), then has the
/// runner make each run's device on the GPU (kernels::cuda::useCudaDeviceIfAsked). Leaves any
/// other device alone.
/// Returns the message to print, with exit status 1, when no GPU answers; std::nullopt otherwise.
/// Throws std::invalid_argument (exit status 2) for a dtype the GPU path does not compute.
std::optional<std::string> prepareCudaDevice(RunConfig& config);

}  // namespace matmulviz::cli
