#pragma once
// Sums of byte counts read from files: a file may hold sizes up to 2^63 - 1, and adding two of
// them must clamp, not overflow (undefined behaviour). Used where a loader accumulates counters.

#include <cstdint>
#include <limits>

namespace matmulviz {

/// a + b, clamped to the int64_t range.
constexpr int64_t addSaturating(int64_t a, int64_t b) {
  int64_t r = 0;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

/// a - b, clamped to the int64_t range.
constexpr int64_t subSaturating(int64_t a, int64_t b) {
  int64_t r = 0;
  if (!__builtin_sub_overflow(a, b, &r)) return r;
  return b < 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

}  // namespace matmulviz
