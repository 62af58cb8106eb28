#pragma once
// Walks the elements of one or two strided tensors of the same shape, innermost dimension in
// runs: fn(offsetA, offsetB, length, innerStrideA, innerStrideB), offsets in elements.

#include "core/tensor/tensor.h"

#include <stdexcept>
#include <string>
#include <vector>

namespace matmulviz::detail {

template <typename F>
void forEachRun(const Shape& sizes, const Shape& stridesA, const Shape& stridesB, F&& fn) {
  const auto dim = static_cast<int64_t>(sizes.size());
  if (numelOf(sizes) == 0) return;
  if (dim == 0) {
    fn(int64_t{0}, int64_t{0}, int64_t{1}, int64_t{1}, int64_t{1});
    return;
  }
  const int64_t inner = dim - 1;
  std::vector<int64_t> idx(static_cast<size_t>(dim), 0);
  int64_t offA = 0, offB = 0;
  while (true) {
    fn(offA, offB, sizes[inner], stridesA[inner], stridesB[inner]);
    int64_t d = inner - 1;
    for (; d >= 0; --d) {
      if (++idx[d] < sizes[d]) {
        offA += stridesA[d];
        offB += stridesB[d];
        break;
      }
      offA -= stridesA[d] * (sizes[d] - 1);
      offB -= stridesB[d] * (sizes[d] - 1);
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

/// Calls fn(offset in a, offset in b) for the base of every slice along `dim`: every index of the
/// other dims of a (a and b have the same dim count; b's sizes may differ along `dim`). Used by
/// the ops that work along one dim (softmax, topk).
template <typename F>
void forEachSlice(const Tensor& a, const Tensor& b, int64_t dim, F&& fn) {
  Shape outer = a.sizes();
  outer[dim] = 1;
  forEachRun(outer, a.strides(), b.strides(),
             [&](int64_t oa, int64_t ob, int64_t n, int64_t sa, int64_t sb) {
               for (int64_t i = 0; i < n; ++i) fn(oa + i * sa, ob + i * sb);
             });
}

/// Float element access for the float dtypes; arithmetic happens in float (or double for
/// float64), as PyTorch accumulates float16/bfloat16 in float32.
template <typename F>
void dispatchFloating(DType t, F&& fn);

struct F32 {
  using Acc = float;
  using Stored = float;
  static float load(const void* p, int64_t i) { return static_cast<const float*>(p)[i]; }
  static void store(void* p, int64_t i, float v) { static_cast<float*>(p)[i] = v; }
};
struct F64 {
  using Acc = double;
  using Stored = double;
  static double load(const void* p, int64_t i) { return static_cast<const double*>(p)[i]; }
  static void store(void* p, int64_t i, double v) { static_cast<double*>(p)[i] = v; }
};
struct F16 {
  using Acc = float;
  using Stored = uint16_t;
  static float load(const void* p, int64_t i) {
    return halfToFloat(static_cast<const uint16_t*>(p)[i]);
  }
  static void store(void* p, int64_t i, float v) { static_cast<uint16_t*>(p)[i] = floatToHalf(v); }
};
struct BF16 {
  using Acc = float;
  using Stored = uint16_t;
  static float load(const void* p, int64_t i) {
    return bfloat16ToFloat(static_cast<const uint16_t*>(p)[i]);
  }
  static void store(void* p, int64_t i, float v) {
    static_cast<uint16_t*>(p)[i] = floatToBFloat16(v);
  }
};

template <typename F>
void dispatchFloating(DType t, F&& fn) {
  switch (t) {
    case DType::Float32:
      fn(F32{});
      return;
    case DType::Float64:
      fn(F64{});
      return;
    case DType::Float16:
      fn(F16{});
      return;
    case DType::BFloat16:
      fn(BF16{});
      return;
    case DType::Int64:
    case DType::Bool:
      break;
  }
  throw std::invalid_argument("this op needs a floating point tensor, got " +
                              std::string(dtypeName(t)));
}

}  // namespace matmulviz::detail
