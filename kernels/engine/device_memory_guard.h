#pragma once
// Segments of the simulated device's memory: host pages that the host cannot read or write
// (mprotect PROT_NONE) except while the simulated device itself works on them. An op that
// forgot to go through the device's ComputeBackend and touches device memory from the host
// crashes at that access, as it would on a GPU, instead of silently computing on the host;
// the tests of the engine on a device rely on it.

#include <cstddef>
#include <map>

#include "core/memory/segment_backing.h"

namespace matmulviz::kernels::engine {

class GuardedSegmentBacking final : public SegmentBacking {
 public:
  GuardedSegmentBacking() = default;
  ~GuardedSegmentBacking() override;
  GuardedSegmentBacking(const GuardedSegmentBacking&) = delete;
  GuardedSegmentBacking& operator=(const GuardedSegmentBacking&) = delete;

  /// mmap'd pages, inaccessible until open(). Throws std::bad_alloc when mmap fails.
  void* allocate(std::size_t bytes) override;
  void release(void* ptr, std::size_t bytes) noexcept override;
  bool hasData() const override { return true; }
  bool isCudaDevice() const override { return true; }

  /// Makes every live segment readable and writable (open) or inaccessible again (close).
  /// Nested opens are counted; the pages close with the last close().
  void open();
  void close() noexcept;

 private:
  void protect(void* ptr, std::size_t bytes, bool accessible) const noexcept;
  std::map<void*, std::size_t> segments_;
  int openDepth_ = 0;
};

/// Opens a GuardedSegmentBacking for a scope.
class OpenDeviceMemory {
 public:
  explicit OpenDeviceMemory(GuardedSegmentBacking& backing) : backing_(backing) { backing_.open(); }
  ~OpenDeviceMemory() { backing_.close(); }
  OpenDeviceMemory(const OpenDeviceMemory&) = delete;
  OpenDeviceMemory& operator=(const OpenDeviceMemory&) = delete;

 private:
  GuardedSegmentBacking& backing_;
};

}  // namespace matmulviz::kernels::engine
