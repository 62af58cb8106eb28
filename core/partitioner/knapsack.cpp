#include "core/partitioner/knapsack.h"

#include <algorithm>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>

namespace matmulviz::partitioner {

namespace {

constexpr double kScale = 10000;  // dp_knapsack's S

void checkLengths(std::span<const double> memory, std::span<const double> runtime) {
  if (memory.size() != runtime.size())
    throw std::invalid_argument("knapsack: " + std::to_string(memory.size()) + " memories but " +
                                std::to_string(runtime.size()) + " runtimes");
}

// Python's int(round(x * S)): round half to even on the double product.
int64_t quantise(double x, const char* what) {
  if (!std::isfinite(x) || x < 0)
    throw std::invalid_argument(std::string("dpKnapsack: ") + what + " must be finite and >= 0");
  const int previous = std::fegetround();
  std::fesetround(FE_TONEAREST);
  const double q = std::nearbyint(x * kScale);
  std::fesetround(previous);
  return static_cast<int64_t>(q);
}

}  // namespace

KnapsackResult dpKnapsack(std::span<const double> memory, std::span<const double> runtime,
                          double capacity) {
  checkLengths(memory, runtime);
  const size_t n = memory.size();
  std::vector<int64_t> q(n);
  std::vector<float> r(n);
  for (size_t i = 0; i < n; ++i) {
    q[i] = quantise(memory[i], "memory");
    r[i] = static_cast<float>(runtime[i]);
  }
  const int64_t cap = quantise(capacity, "capacity");
  const size_t cols = static_cast<size_t>(cap) + 1;
  std::vector<float> dp((n + 1) * cols, 0.0f);
  auto row = [&](size_t i) { return dp.data() + i * cols; };
  for (size_t i = 1; i <= n; ++i) {
    const float* prev = row(i - 1);
    float* cur = row(i);
    std::copy(prev, prev + cols, cur);
    if (q[i - 1] == 0) {
      for (size_t j = 0; j < cols; ++j) cur[j] = prev[j] + r[i - 1];
      continue;
    }
    const auto w = static_cast<size_t>(q[i - 1]);
    for (size_t j = w; j < cols; ++j) cur[j] = std::max(prev[j], prev[j - w] + r[i - 1]);
  }
  KnapsackResult result;
  size_t j = cols - 1;
  for (size_t i = n; i >= 1; --i) {
    if (row(i)[j] != row(i - 1)[j]) {
      result.saved.push_back(static_cast<int>(i - 1));
      j -= static_cast<size_t>(q[i - 1]);
    } else {
      result.recompute.push_back(static_cast<int>(i - 1));
    }
  }
  std::reverse(result.saved.begin(), result.saved.end());
  result.runtime = static_cast<double>(row(n)[cols - 1]);
  return result;
}

KnapsackResult greedyKnapsack(std::span<const double> memory, std::span<const double> runtime,
                              double capacity) {
  checkLengths(memory, runtime);
  std::vector<double> ratio(memory.size());
  for (size_t i = 0; i < memory.size(); ++i) {
    if (memory[i] == 0) throw std::domain_error("float division by zero");
    ratio[i] = runtime[i] / memory[i];
  }
  std::vector<int> order(memory.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return ratio[static_cast<size_t>(a)] > ratio[static_cast<size_t>(b)];
  });
  KnapsackResult result;
  double total = 0;
  for (int i : order) {
    const auto k = static_cast<size_t>(i);
    if (total + memory[k] <= capacity) {
      total += memory[k];
      result.runtime += runtime[k];
      result.saved.push_back(i);
    } else {
      result.recompute.push_back(i);
    }
  }
  return result;
}

}  // namespace matmulviz::partitioner
