#include "kernels/cuda/cuda_device.h"

#include <memory>
#include <string>

#include "kernels/cuda/cuda_compute_backend.h"
#include "kernels/cuda/cuda_error.h"
#include "kernels/cuda/cuda_probe.h"
#include "kernels/cuda/cuda_segment_backing.h"

namespace matmulviz::kernels::cuda {
namespace {

/// The three parts of a CUDA device, in one allocation; the context is declared last, so it
/// (and its allocator, which gives its segments back through the backing) goes first.
struct CudaDeviceParts {
  CudaDeviceParts(CachingAllocator::Options options, int device)
      : backing(device), compute(device), context(DeviceKind::Cuda, backing, options, &compute) {}
  CudaSegmentBacking backing;
  CudaComputeBackend compute;
  DeviceContext context;
};

}  // namespace

DevicePtr makeCudaDevice(CachingAllocator::Options options, int device) {
  const CudaStatus status = probeCuda();
  if (!status.available) throw CudaError("CUDA is not available: " + status.reason);
  auto parts = std::make_shared<CudaDeviceParts>(options, device);
  return DevicePtr(parts, &parts->context);
}

}  // namespace matmulviz::kernels::cuda
