#pragma once
// Device memory for the caching-allocator model: each simulated segment is one cudaMalloc, as in
// PyTorch's CUDACachingAllocator (c10/cuda/CUDACachingAllocator.cpp), which also asks the
// driver for whole segments and carves blocks out of them itself.

#include <cstddef>

#include "core/memory/segment_backing.h"

namespace matmulviz::kernels::cuda {

class CudaSegmentBacking final : public SegmentBacking {
 public:
  /// Uses CUDA device `device`. Throws CudaError when the build has no CUDA backend or the
  /// device cannot be selected.
  explicit CudaSegmentBacking(int device = 0);

  /// cudaMalloc(bytes) on the device. Throws CudaOutOfMemory (a std::bad_alloc) when the
  /// device is out of memory, CudaError for any other failure.
  void* allocate(std::size_t bytes) override;
  /// cudaFree; a failure here (for example a sticky error from an earlier kernel) is counted
  /// in releaseFailures(), never thrown.
  void release(void* ptr, std::size_t bytes) noexcept override;
  bool hasData() const override { return true; }
  bool isCudaDevice() const override { return true; }

  int device() const { return device_; }
  std::size_t releaseFailures() const { return releaseFailures_; }

 private:
  int device_;
  std::size_t releaseFailures_ = 0;
};

}  // namespace matmulviz::kernels::cuda
