#pragma once
// Where the bytes of a simulated allocator segment really live. The caching-allocator model
// (core/memory/caching_allocator.h) decides sizes, pools and reuse exactly as PyTorch does; a
// SegmentBacking gives each segment real memory (host RAM, cudaMalloc) or none (meta device).

#include <cstddef>

namespace matmulviz {

class SegmentBacking {
 public:
  virtual ~SegmentBacking() = default;
  /// Returns `bytes` of memory for a new segment, or nullptr when this backing holds no data
  /// (meta). Throws std::bad_alloc (or a subclass) when the memory cannot be had.
  virtual void* allocate(std::size_t bytes) = 0;
  /// Gives back a segment obtained from allocate(ptr, bytes). Never throws.
  virtual void release(void* ptr, std::size_t bytes) noexcept = 0;
  /// True when segments carry real data (cpu, cuda); false for meta.
  virtual bool hasData() const = 0;
  /// True when the memory lives on a CUDA device (kernels must copy data there).
  virtual bool isCudaDevice() const { return false; }
};

}  // namespace matmulviz
