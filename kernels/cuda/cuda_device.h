#pragma once
// A CUDA GPU as an engine device: a DeviceContext of kind Cuda whose memory is cudaMalloc'd
// segments of the caching-allocator model (cuda_segment_backing.h) and whose arithmetic is
// CudaComputeBackend (cuda_compute_backend.h). Plain C++: callers need no CUDA headers.

#include "core/costmodel/cost_model.h"
#include "core/memory/caching_allocator.h"
#include "core/strategies/runner.h"
#include "core/tensor/device.h"
#include "kernels/cuda/cuda_probe.h"

namespace matmulviz::kernels::cuda {

/// A device on CUDA device `device` (0-based ordinal, as cudaSetDevice takes), accounted by an
/// allocator model with `options` (capacityBytes: bytes the model may hand out before it
/// reports out of memory). Every device made on one GPU shares, for the life of the process, one
/// compute backend (one cuBLAS handle) and one cache of cudaMalloc'd segments: each new device's
/// allocator model starts empty, while real segments given back by an earlier one are reused
/// for requests of the same size (released to the driver when cudaMalloc runs out).
/// Throws CudaError "CUDA is not available: <reason>" when no device answers (probeCuda()) or
/// the build has no CUDA backend, and CudaError when `device` cannot be selected.
DevicePtr makeCudaDevice(CachingAllocator::Options options = {}, int device = 0);

/// The GPU profile a cuda run's estimates use: `model` when given (--model, a calibrated file),
/// else the built-in profile the first device's name names ("NVIDIA H200" -> h200), else t4's,
/// the slowest built-in one, so that an unknown GPU skips a long backward rather than runs it.
inline costmodel::GpuProfile gpuProfileOfThisDevice(const costmodel::GpuProfile* model = nullptr) {
  if (model != nullptr) return *model;
  const CudaStatus status = probeCuda();
  if (status.available && !status.deviceNames.empty())
    if (const costmodel::GpuProfile* p = costmodel::profileForDeviceName(status.deviceNames[0]))
      return *p;
  return *costmodel::findGpuProfile("t4");
}

/// When `config` asks for the cuda device, makes the runner create each run's device with
/// makeCudaDevice (the engine cannot make GPU devices itself) and estimate backwards at the GPU's
/// bandwidth (gpuProfileOfThisDevice(model)); otherwise leaves it alone. The first run then
/// throws CudaError saying why when no GPU answers.
inline void useCudaDeviceIfAsked(RunConfig& config, const costmodel::GpuProfile* model = nullptr) {
  if (config.device != DeviceKind::Cuda) return;
  config.deviceFactory = [](CachingAllocator::Options o) { return makeCudaDevice(o); };
  config.deviceBandwidthBytesPerS = gpuProfileOfThisDevice(model).bandwidthBytesPerS;
}

}  // namespace matmulviz::kernels::cuda
