#include "kernels/engine/device_memory_guard.h"

#include <sys/mman.h>

#include <new>

namespace matmulviz::kernels::engine {

GuardedSegmentBacking::~GuardedSegmentBacking() {
  for (const auto& [ptr, bytes] : segments_) munmap(ptr, bytes);
}

void* GuardedSegmentBacking::allocate(std::size_t bytes) {
  const int prot = openDepth_ > 0 ? PROT_READ | PROT_WRITE : PROT_NONE;
  void* p = mmap(nullptr, bytes, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  segments_.emplace(p, bytes);
  return p;
}

void GuardedSegmentBacking::release(void* ptr, std::size_t bytes) noexcept {
  segments_.erase(ptr);
  munmap(ptr, bytes);
}

void GuardedSegmentBacking::protect(void* ptr, std::size_t bytes, bool accessible) const noexcept {
  mprotect(ptr, bytes, accessible ? PROT_READ | PROT_WRITE : PROT_NONE);
}

void GuardedSegmentBacking::open() {
  if (openDepth_++ > 0) return;
  for (const auto& [ptr, bytes] : segments_) protect(ptr, bytes, true);
}

void GuardedSegmentBacking::close() noexcept {
  if (--openDepth_ > 0) return;
  for (const auto& [ptr, bytes] : segments_) protect(ptr, bytes, false);
}

}  // namespace matmulviz::kernels::engine
