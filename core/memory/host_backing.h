#pragma once
// Backings for the simulated allocator's segments on the host.
//
// HostBacking (the cpu device): real host memory carved from one large reservation (an arena
// of virtual memory, touched lazily). A released segment's range goes back to a free list and
// the next segment takes the lowest-addressed range that fits, so runs reuse the pages earlier
// runs touched whatever their segment sizes. This machine pays about 2 s per GiB the first time
// fresh pages are touched; with the arena a process pays it once, for its largest peak, instead
// of once per run. One HostBacking is shared by all runs of a process; each run still gets a
// fresh allocator model (isolated statistics).
//
// MetaBacking (the meta device): no memory at all; tensors carry sizes and accounting only.

#include "core/memory/segment_backing.h"

#include <cstdint>
#include <map>
#include <mutex>

namespace matmulviz {

class HostBacking final : public SegmentBacking {
 public:
  /// Reserves `reserveBytes` of address space (not memory: pages are backed when touched).
  explicit HostBacking(int64_t reserveBytes = int64_t{256} << 30);
  ~HostBacking() override;
  HostBacking(const HostBacking&) = delete;
  HostBacking& operator=(const HostBacking&) = delete;
  /// Throws std::bad_alloc when no free range of the reservation fits.
  void* allocate(std::size_t bytes) override;
  void release(void* ptr, std::size_t bytes) noexcept override;
  bool hasData() const override { return true; }

  /// Gives the pages of every free range below the high-water mark back to the OS
  /// (madvise(MADV_DONTNEED)); the ranges stay reserved and read as zeros when touched again.
  /// Lowers the high-water mark to the end of the highest live range. Returns the bytes released.
  int64_t releaseFreePages();

  /// Bytes of the reservation ever handed out at least once (the high-water mark): an upper
  /// bound of the pages touched, and so of what the cold runs paid for.
  int64_t highWaterBytes() const;

 private:
  mutable std::mutex mutex_;
  char* base_ = nullptr;
  int64_t reserved_ = 0;
  int64_t highWater_ = 0;
  std::map<int64_t, int64_t> free_;  // offset -> size, coalesced
};

class MetaBacking final : public SegmentBacking {
 public:
  void* allocate(std::size_t) override { return nullptr; }
  void release(void*, std::size_t) noexcept override {}
  bool hasData() const override { return false; }
};

/// Gives the pages of the cpu device's arena (the HostBacking every cpu device shares) that no
/// live segment uses back to the OS (HostBacking::releaseFreePages; the next run touches them
/// again, at about 2 s per GiB on a slow machine) and trims the C heap (malloc_trim), so an idle
/// process holds only what is alive. For a long-lived front end between runs (the app after a
/// run ends or is cancelled); the CLI exits instead. Returns the arena bytes released. Defined
/// beside that arena (core/tensor/device.cpp).
int64_t releaseUnusedHostMemory();

/// Memory the OS says it can still give this process (MemAvailable of /proc/meminfo), bytes.
int64_t availableHostMemoryBytes();

}  // namespace matmulviz
