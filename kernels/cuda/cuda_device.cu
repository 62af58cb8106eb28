#include "kernels/cuda/cuda_device.h"

#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>

#include "kernels/cuda/cuda_compute_backend.h"
#include "kernels/cuda/cuda_error.h"
#include "kernels/cuda/cuda_probe.h"
#include "kernels/cuda/cuda_segment_backing.h"

namespace matmulviz::kernels::cuda {
namespace {

/// cudaMalloc'd segments kept between the devices a process makes on one GPU, as PyTorch's
/// allocator keeps them between iterations. Each run's allocator model starts empty (its
/// reserved bytes are its own, as the seed's table was taken), but a later run asking for a
/// segment of a size given back before gets that memory again instead of a new cudaMalloc, so
/// warm timings do not measure the driver. Given back to the driver when cudaMalloc runs out,
/// and at exit.
class ReusedSegments final : public SegmentBacking {
 public:
  explicit ReusedSegments(int device) : backing_(device) {}
  ~ReusedSegments() override { releaseCached(); }

  void* allocate(std::size_t bytes) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = free_.find(bytes); it != free_.end()) {
      void* p = it->second;
      free_.erase(it);
      return p;
    }
    try {
      return backing_.allocate(bytes);
    } catch (const std::bad_alloc&) {  // CudaOutOfMemory: give the cache back, then retry once
      releaseCached();
      return backing_.allocate(bytes);
    }
  }
  void release(void* ptr, std::size_t bytes) noexcept override {
    std::lock_guard<std::mutex> lock(mutex_);
    try {
      free_.emplace(bytes, ptr);
    } catch (...) {
      backing_.release(ptr, bytes);
    }
  }
  bool hasData() const override { return true; }
  bool isCudaDevice() const override { return true; }

 private:
  void releaseCached() noexcept {
    for (const auto& [bytes, ptr] : free_) backing_.release(ptr, bytes);
    free_.clear();
  }

  std::mutex mutex_;
  CudaSegmentBacking backing_;
  std::multimap<std::size_t, void*> free_;  // bytes -> segment
};

/// One segment cache and one compute backend (one cuBLAS handle) per GPU, for the process.
struct GpuParts {
  explicit GpuParts(int device) : segments(device), compute(device) {}
  ReusedSegments segments;
  CudaComputeBackend compute;
};

GpuParts& partsFor(int device) {
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<GpuParts>> parts;
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<GpuParts>& p = parts[device];
  if (!p) p = std::make_unique<GpuParts>(device);
  return *p;
}

}  // namespace

DevicePtr makeCudaDevice(CachingAllocator::Options options, int device) {
  const CudaStatus status = probeCuda();
  if (!status.available) throw CudaError("CUDA is not available: " + status.reason);
  GpuParts& gpu = partsFor(device);
  return std::make_shared<DeviceContext>(DeviceKind::Cuda, gpu.segments, options, &gpu.compute);
}

}  // namespace matmulviz::kernels::cuda
