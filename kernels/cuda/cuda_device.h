#pragma once
// A CUDA GPU as an engine device: a DeviceContext of kind Cuda whose memory is cudaMalloc'd
// segments of the caching-allocator model (cuda_segment_backing.h) and whose arithmetic is
// CudaComputeBackend (cuda_compute_backend.h). Plain C++: callers need no CUDA headers.

#include "core/memory/caching_allocator.h"
#include "core/strategies/runner.h"
#include "core/tensor/device.h"

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

/// When `config` asks for the cuda device, makes the runner create each run's device with
/// makeCudaDevice (the engine cannot make GPU devices itself); otherwise leaves it alone. The
/// first run then throws CudaError saying why when no GPU answers.
inline void useCudaDeviceIfAsked(RunConfig& config) {
  if (config.device == DeviceKind::Cuda)
    config.deviceFactory = [](CachingAllocator::Options o) { return makeCudaDevice(o); };
}

}  // namespace matmulviz::kernels::cuda
