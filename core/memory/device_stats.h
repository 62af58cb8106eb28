#pragma once
// The caching allocator's statistics as PyTorch keeps them (c10/core/CachingDeviceAllocator.h,
// DeviceStats; c10/cuda/CUDACachingAllocator.cpp updates them): what torch.cuda.memory_stats()
// returns and torch.cuda.memory_summary() prints. Every statistic has a current value, its peak,
// and the totals ever added ("allocated") and removed ("freed"), for all blocks and for each
// pool.

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <string>

namespace matmulviz {

/// One statistic (c10's Stat): increase_stat / decrease_stat.
struct Stat {
  int64_t current = 0, peak = 0, allocated = 0, freed = 0;
  void increase(int64_t amount) {
    current += amount;
    peak = std::max(peak, current);
    allocated += amount;
  }
  void decrease(int64_t amount) {
    current -= amount;
    freed += amount;
  }
  void resetPeak() { peak = current; }
  void resetAccumulated() { allocated = freed = 0; }
};

/// A statistic for all blocks, the small pool's and the large pool's (c10's StatType order:
/// AGGREGATE, SMALL_POOL, LARGE_POOL), updated together as get_stat_types_for_pool selects them.
struct StatArray {
  std::array<Stat, 3> byType;  // all, small_pool, large_pool
  const Stat& all() const { return byType[0]; }
  const Stat& pool(bool small) const { return byType[small ? 1 : 2]; }
  void increase(bool small, int64_t amount) {
    byType[0].increase(amount);
    byType[small ? 1 : 2].increase(amount);
  }
  void decrease(bool small, int64_t amount) {
    byType[0].decrease(amount);
    byType[small ? 1 : 2].decrease(amount);
  }
  /// By the net change of a free (free_block's net_change_inactive_split_*).
  void change(bool small, int64_t delta) {
    if (delta > 0) increase(small, delta);
    if (delta < 0) decrease(small, -delta);
  }
};

/// DeviceStats: counts (allocation, segment, active, inactive_split) and bytes. "active" blocks
/// are allocated or freed and waiting for another stream; "inactive_split" are free blocks of
/// a segment that is partly in use, which empty_cache() cannot release.
struct DeviceStats {
  StatArray allocation, segment, active, inactiveSplit;
  StatArray allocatedBytes, reservedBytes, activeBytes, inactiveSplitBytes, requestedBytes;
  int64_t numAllocRetries = 0, numOoms = 0, numSyncAllStreams = 0;
  int64_t numDeviceAlloc = 0, numDeviceFree = 0;  // cudaMalloc and cudaFree calls
  Stat oversizeAllocations, oversizeSegments;     // none without max_split_size

  template <typename F>
  void forEachArray(F f) {
    for (StatArray* a : {&allocation, &segment, &active, &inactiveSplit, &allocatedBytes,
                         &reservedBytes, &activeBytes, &inactiveSplitBytes, &requestedBytes})
      f(*a);
  }
  void resetPeak() {  // resetPeakStats
    forEachArray([](StatArray& a) {
      for (Stat& s : a.byType) s.resetPeak();
    });
    oversizeAllocations.resetPeak();
    oversizeSegments.resetPeak();
  }
  void resetAccumulated() {  // resetAccumulatedStats
    forEachArray([](StatArray& a) {
      for (Stat& s : a.byType) s.resetAccumulated();
    });
    numAllocRetries = numOoms = numSyncAllStreams = numDeviceAlloc = numDeviceFree = 0;
    oversizeAllocations.resetAccumulated();
    oversizeSegments.resetAccumulated();
  }
};

/// torch.cuda.memory_stats()'s flat dict (torch/cuda/memory.py flattens
/// torch._C._cuda_memoryStats): "<stat>.<all|small_pool|large_pool>.<current|peak|allocated|freed>"
/// for allocation, segment, active, inactive_split, allocated_bytes, reserved_bytes,
/// active_bytes, inactive_split_bytes and requested_bytes; "oversize_allocations.<...>",
/// "oversize_segments.<...>"; num_alloc_retries, num_ooms, num_sync_all_streams,
/// num_device_alloc, num_device_free; max_split_size (-1: unlimited, the default).
std::map<std::string, int64_t> memoryStatsByKey(const DeviceStats& stats);

}  // namespace matmulviz
