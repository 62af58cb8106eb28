#include "core/memory/device_stats.h"

#include <utility>

namespace matmulviz {

std::map<std::string, int64_t> memoryStatsByKey(const DeviceStats& stats) {
  std::map<std::string, int64_t> out;
  auto putStat = [&](const std::string& prefix, const Stat& s) {
    out[prefix + ".current"] = s.current;
    out[prefix + ".peak"] = s.peak;
    out[prefix + ".allocated"] = s.allocated;
    out[prefix + ".freed"] = s.freed;
  };
  const std::pair<const char*, const StatArray*> arrays[] = {
      {"allocation", &stats.allocation},
      {"segment", &stats.segment},
      {"active", &stats.active},
      {"inactive_split", &stats.inactiveSplit},
      {"allocated_bytes", &stats.allocatedBytes},
      {"reserved_bytes", &stats.reservedBytes},
      {"active_bytes", &stats.activeBytes},
      {"inactive_split_bytes", &stats.inactiveSplitBytes},
      {"requested_bytes", &stats.requestedBytes},
  };
  for (const auto& [name, array] : arrays) {
    putStat(std::string(name) + ".all", array->byType[0]);
    putStat(std::string(name) + ".small_pool", array->byType[1]);
    putStat(std::string(name) + ".large_pool", array->byType[2]);
  }
  putStat("oversize_allocations", stats.oversizeAllocations);
  putStat("oversize_segments", stats.oversizeSegments);
  out["num_alloc_retries"] = stats.numAllocRetries;
  out["num_ooms"] = stats.numOoms;
  out["num_sync_all_streams"] = stats.numSyncAllStreams;
  out["num_device_alloc"] = stats.numDeviceAlloc;
  out["num_device_free"] = stats.numDeviceFree;
  out["max_split_size"] = -1;
  return out;
}

}  // namespace matmulviz
