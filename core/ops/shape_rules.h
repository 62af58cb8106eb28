#pragma once
// Shape rules shared by the ops, with PyTorch's wording in their errors.

#include "core/tensor/tensor.h"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

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

/// Dense strides for `sizes` that keep the memory order of the operands' dims, as TensorIterator
/// lays out a new output (aten/src/ATen/TensorIterator.cpp: reorder_dimensions, then
/// allocate_or_resize_outputs) and at::infer_dense_strides (ATen/TensorUtils.cpp) for one
/// operand: dims sorted innermost-first by stride, the first operand with non-zero strides in
/// both dims deciding (a smaller size first on a tie), a comparison no operand decides leaving
/// the dims in place; contiguous strides when nothing reorders.
inline Shape denseStridesLike(const Shape& sizes, const std::vector<Shape>& operandStrides) {
  const size_t n = sizes.size();
  std::vector<size_t> perm(n);  // perm[0] is the innermost dim
  for (size_t i = 0; i < n; ++i) perm[i] = n - 1 - i;
  auto shouldSwap = [&](size_t d0, size_t d1) {
    for (const Shape& st : operandStrides) {
      const int64_t s0 = st[d0], s1 = st[d1];
      if (s0 == 0 || s1 == 0) continue;
      if (s0 != s1) return s0 < s1 ? -1 : 1;
      if (sizes[d0] > sizes[d1]) return 1;
    }
    return 0;
  };
  for (size_t i = 1; i < n; ++i) {  // insertion sort that tolerates undecided comparisons
    size_t d1 = i;
    for (size_t j = 1; j <= i; ++j) {
      const size_t d0 = i - j;
      const int c = shouldSwap(perm[d0], perm[d1]);
      if (c > 0) {
        std::swap(perm[d0], perm[d1]);
        d1 = d0;
      } else if (c < 0) {
        break;
      }
    }
  }
  Shape strides(n);
  int64_t next = 1;
  for (size_t i = 0; i < n; ++i) {
    strides[perm[i]] = next;
    if (sizes[perm[i]] > 1) next *= sizes[perm[i]];
  }
  return strides;
}

/// Whether the elements of (sizes, strides) fill a block of numel elements with no gaps and no
/// element twice (c10::TensorImpl::compute_non_overlapping_and_dense).
inline bool isNonOverlappingAndDense(const Shape& sizes, const Shape& strides) {
  if (sizes.size() == 1) return sizes[0] < 2 || strides[0] == 1;
  std::vector<size_t> perm(sizes.size());
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = i;
  std::sort(perm.begin(), perm.end(), [&](size_t a, size_t b) {
    if (sizes[a] < 2) return false;
    if (sizes[b] < 2) return true;
    return strides[a] < strides[b];
  });
  int64_t required = 1;
  for (size_t d : perm) {
    if (sizes[d] < 2) return true;
    if (strides[d] != required) return false;
    required *= sizes[d];
  }
  return true;
}

}  // namespace matmulviz
