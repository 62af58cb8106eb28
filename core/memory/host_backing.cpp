#include "core/memory/host_backing.h"

#include <sys/mman.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <new>
#include <string>

namespace matmulviz {

namespace {
constexpr int64_t kAlign = int64_t{2} << 20;  // every segment size is a multiple of 2 MiB
int64_t alignUp(int64_t v) {
  return (v + kAlign - 1) / kAlign * kAlign;
}
}  // namespace

HostBacking::HostBacking(int64_t reserveBytes) {
  void* p = mmap(nullptr, static_cast<size_t>(reserveBytes), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return;  // every allocate() will throw bad_alloc
  base_ = static_cast<char*>(p);
  reserved_ = reserveBytes;
  madvise(base_, static_cast<size_t>(reserved_), MADV_HUGEPAGE);  // fewer faults where allowed
  free_.emplace(0, reserved_);
}

HostBacking::~HostBacking() {
  if (base_) munmap(base_, static_cast<size_t>(reserved_));
}

void* HostBacking::allocate(std::size_t bytes) {
  const int64_t size = alignUp(static_cast<int64_t>(bytes == 0 ? 1 : bytes));
  std::lock_guard lock(mutex_);
  for (auto it = free_.begin(); it != free_.end(); ++it) {  // lowest address first
    if (it->second < size) continue;
    const int64_t offset = it->first;
    const int64_t rest = it->second - size;
    free_.erase(it);
    if (rest > 0) free_.emplace(offset + size, rest);
    highWater_ = std::max(highWater_, offset + size);
    return base_ + offset;
  }
  throw std::bad_alloc();
}

void HostBacking::release(void* ptr, std::size_t bytes) noexcept {
  if (!ptr) return;
  int64_t offset = static_cast<char*>(ptr) - base_;
  int64_t size = alignUp(static_cast<int64_t>(bytes == 0 ? 1 : bytes));
  std::lock_guard lock(mutex_);
  auto next = free_.lower_bound(offset);
  if (next != free_.end() && next->first == offset + size) {
    size += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == offset) {
      offset = prev->first;
      size += prev->second;
      free_.erase(prev);
    }
  }
  free_.emplace(offset, size);
}

int64_t HostBacking::releaseFreePages() {
  std::lock_guard lock(mutex_);
  int64_t released = 0;
  for (const auto& [offset, size] : free_) {
    if (offset >= highWater_) break;
    const int64_t bytes = std::min(size, highWater_ - offset);
    madvise(base_ + offset, static_cast<size_t>(bytes), MADV_DONTNEED);
    released += bytes;
  }
  // The free range that reaches the end of the reservation starts where live data ends.
  if (!free_.empty()) {
    const auto& [offset, size] = *free_.rbegin();
    if (offset + size == reserved_) highWater_ = std::min(highWater_, offset);
  }
  return released;
}

int64_t HostBacking::highWaterBytes() const {
  std::lock_guard lock(mutex_);
  return highWater_;
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
