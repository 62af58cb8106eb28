#pragma once
// What every report builder needs around a run: seeded random host inputs and host copies of
// device results. One place for the strategies runner, the multi-head report and the einsum
// command, so the same seed gives the same numbers everywhere.

#include "core/autograd/grad_mode.h"
#include "core/ops/ops.h"
#include "core/tensor/tensor.h"

#include <cstdint>
#include <random>
#include <string>

namespace matmulviz {

/// A host tensor of `sizes` and `dtype` (any dtype storeFromDouble takes) filled in row-major
/// order with dist(rng) from std::mt19937_64(seed), each value rounded once to `dtype`; its
/// allocation labelled `label`.
template <typename Dist>
Tensor randomHost(const Shape& sizes, DType dtype, uint64_t seed, Dist dist,
                  const std::string& label) {
  std::mt19937_64 rng(seed);
  Tensor t = empty(sizes, dtype, nullptr, label);
  for (int64_t x = 0, n = t.numel(); x < n; ++x)
    storeFromDouble(t.dataPtr(), dtype, x, static_cast<double>(dist(rng)));
  return t;
}

/// randomHost with the standard normal distribution (float, mean 0, standard deviation 1): the
/// grad_output of the strategies and the einsum command's operands.
inline Tensor randomNormalHost(const Shape& sizes, DType dtype, uint64_t seed,
                               const std::string& label) {
  return randomHost(sizes, dtype, seed, std::normal_distribution<float>(0.0f, 1.0f), label);
}

/// A host copy of `t` labelled `label`, built outside autograd; an undefined tensor when `t` is
/// undefined or has no data (meta).
inline Tensor hostCopy(const Tensor& t, const std::string& label) {
  if (!t.defined() || !t.hasData()) return {};
  NoGradGuard noGrad;
  return toDevice(t, nullptr, label);
}

}  // namespace matmulviz
