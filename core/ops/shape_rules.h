#pragma once
// Shape rules shared by the ops, with PyTorch's wording in their errors.

#include "core/tensor/tensor.h"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace matmulviz {

/// `d` counted from the end when negative, for a tensor of `dim` dims (c10::maybe_wrap_dim).
/// Throws std::out_of_range "Dimension out of range (expected to be in range of [-dim, dim-1],
/// but got d)".
inline int64_t wrapDim(int64_t d, int64_t dim) {
  const int64_t w = d < 0 ? d + dim : d;
  if (w < 0 || w >= dim)
    throw std::out_of_range("Dimension out of range (expected to be in range of [" +
                            std::to_string(-dim) + ", " + std::to_string(dim - 1) + "], but got " +
                            std::to_string(d) + ")");
  return w;
}

/// The broadcast of two shapes (at::infer_size, aten/src/ATen/ExpandUtils.cpp). Throws
/// std::invalid_argument "The size of tensor a (x) must match the size of tensor b (y) at
/// non-singleton dimension i".
inline Shape broadcastShapes(const Shape& a, const Shape& b) {
  const size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = n; i-- > 0;) {  // from the last dim, as infer_size reports the first mismatch
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      throw std::invalid_argument("The size of tensor a (" + std::to_string(da) +
                                  ") must match the size of tensor b (" + std::to_string(db) +
                                  ") at non-singleton dimension " + std::to_string(i));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

}  // namespace matmulviz
