#pragma once
// Backings for the simulated allocator's segments on the host.
//
// HostBacking (the cpu device): real host memory. Released segments are kept in a cache keyed
// by size and handed to the next segment of the same size, the way the CUDA caching allocator
// keeps freed blocks: this machine pays about 2 s per GiB the first time fresh pages are
// touched, so repeated runs must not touch fresh pages again. One HostBacking is shared by all
// runs of a process; each run still gets a fresh allocator model (isolated statistics).
//
// MetaBacking (the meta device): no memory at all; tensors carry sizes and accounting only.

#include "core/memory/segment_backing.h"

#include <cstdint>
#include <map>
#include <mutex>

namespace matmulviz {

class HostBacking final : public SegmentBacking {
 public:
  /// `cacheLimitBytes`: cached (released but kept) bytes beyond this are returned to the OS.
  explicit HostBacking(int64_t cacheLimitBytes = int64_t{8} << 30);
  ~HostBacking() override;
  void* allocate(std::size_t bytes) override;
  void release(void* ptr, std::size_t bytes) noexcept override;
  bool hasData() const override { return true; }

  /// Returns every cached segment to the OS.
  void trim() noexcept;
  int64_t cachedBytes() const;
  /// Bytes obtained from the OS that were never touched before (fresh pages), since start.
  int64_t freshBytes() const;

 private:
  mutable std::mutex mutex_;
  std::multimap<std::size_t, void*> cache_;
  int64_t cachedBytes_ = 0;
  int64_t freshBytes_ = 0;
  int64_t cacheLimitBytes_;
};

class MetaBacking final : public SegmentBacking {
 public:
  void* allocate(std::size_t) override { return nullptr; }
  void release(void*, std::size_t) noexcept override {}
  bool hasData() const override { return false; }
};

/// Memory the OS says it can still give this process (MemAvailable of /proc/meminfo), bytes.
int64_t availableHostMemoryBytes();

}  // namespace matmulviz
