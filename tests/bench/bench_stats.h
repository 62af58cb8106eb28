#pragma once
// Timing helpers the benchmarks share: seconds since a steady_clock point, and the median of a
// set of runs (the upper middle one for an even count).

#include <algorithm>
#include <chrono>
#include <vector>

namespace matmulviz::bench {

inline double seconds(const std::chrono::steady_clock::time_point& t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace matmulviz::bench
