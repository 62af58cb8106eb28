#include "core/memory/host_backing.h"

#include <cstdlib>
#include <fstream>
#include <new>
#include <string>

namespace matmulviz {

HostBacking::HostBacking(int64_t cacheLimitBytes) : cacheLimitBytes_(cacheLimitBytes) {}

HostBacking::~HostBacking() { trim(); }

void* HostBacking::allocate(std::size_t bytes) {
  {
    std::lock_guard lock(mutex_);
    auto it = cache_.find(bytes);
    if (it != cache_.end()) {
      void* p = it->second;
      cache_.erase(it);
      cachedBytes_ -= static_cast<int64_t>(bytes);
      return p;
    }
  }
  const std::size_t alignment = 4096;
  const std::size_t rounded = (bytes + alignment - 1) / alignment * alignment;
  void* p = std::aligned_alloc(alignment, rounded == 0 ? alignment : rounded);
  if (!p) {
    trim();
    p = std::aligned_alloc(alignment, rounded == 0 ? alignment : rounded);
    if (!p) throw std::bad_alloc();
  }
  std::lock_guard lock(mutex_);
  freshBytes_ += static_cast<int64_t>(bytes);
  return p;
}

void HostBacking::release(void* ptr, std::size_t bytes) noexcept {
  if (!ptr) return;
  std::lock_guard lock(mutex_);
  if (cachedBytes_ + static_cast<int64_t>(bytes) > cacheLimitBytes_) {
    std::free(ptr);
    return;
  }
  cache_.emplace(bytes, ptr);
  cachedBytes_ += static_cast<int64_t>(bytes);
}

void HostBacking::trim() noexcept {
  std::lock_guard lock(mutex_);
  for (auto& [size, p] : cache_) std::free(p);
  cache_.clear();
  cachedBytes_ = 0;
}

int64_t HostBacking::cachedBytes() const {
  std::lock_guard lock(mutex_);
  return cachedBytes_;
}

int64_t HostBacking::freshBytes() const {
  std::lock_guard lock(mutex_);
  return freshBytes_;
}

int64_t availableHostMemoryBytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  int64_t value = 0;
  std::string unit;
  while (in >> key >> value >> unit) {
    if (key == "MemAvailable:") return value * 1024;
  }
  return int64_t{1} << 40;  // unknown: do not refuse
}

}  // namespace matmulviz
