#pragma once
// A CUDA GPU as an engine device: a DeviceContext of kind Cuda whose memory is cudaMalloc'd
// segments of the caching-allocator model (cuda_segment_backing.h) and whose arithmetic is
// CudaComputeBackend (cuda_compute_backend.h). Plain C++: callers need no CUDA headers.

#include "core/memory/caching_allocator.h"
#include "core/tensor/device.h"

namespace matmulviz::kernels::cuda {

/// A device on CUDA device `device` (0-based ordinal, as cudaSetDevice takes), accounted by an
/// allocator model with `options` (capacityBytes: bytes the model may hand out before it
/// reports out of memory). The context owns its segment backing and compute backend; they live
/// as long as the returned pointer or any storage on the device.
/// Throws CudaError "CUDA is not available: <reason>" when no device answers (probeCuda()) or
/// the build has no CUDA backend, and CudaError when `device` cannot be selected.
DevicePtr makeCudaDevice(CachingAllocator::Options options = {}, int device = 0);

}  // namespace matmulviz::kernels::cuda
