#pragma once
// Strided layouts of the engine's tensors as kernel bodies see them: up to kMaxDims sizes and
// strides (elements) and a storage offset, turned into an element offset from a row-major linear
// index. Host and device (the engine's kernels under kernels/engine run on both).

#include <cstdint>

#include "core/sim/hd.h"

namespace matmulviz::kernels::engine {

inline constexpr int kMaxDims = 8;

/// Where element `linear` (row-major over sizes) of a strided tensor lives in its storage.
struct Strided {
  int rank = 0;
  std::int64_t sizes[kMaxDims] = {};
  std::int64_t strides[kMaxDims] = {};
  std::int64_t offset = 0;  ///< storage offset, elements

  MATMULVIZ_HD std::int64_t numel() const {
    std::int64_t n = 1;
    for (int d = 0; d < rank; ++d) n *= sizes[d];
    return n;
  }
  /// Storage offset of the element at row-major position `linear` (0 <= linear < numel()).
  MATMULVIZ_HD std::int64_t at(std::int64_t linear) const {
    std::int64_t off = offset;
    for (int d = rank - 1; d >= 0; --d) {
      off += (linear % sizes[d]) * strides[d];
      linear /= sizes[d];
    }
    return off;
  }
  /// Storage offset of [i0, i1, i2] of a 3-d layout.
  MATMULVIZ_HD std::int64_t at3(std::int64_t i0, std::int64_t i1, std::int64_t i2) const {
    return offset + i0 * strides[0] + i1 * strides[1] + i2 * strides[2];
  }
};

/// The linear thread index of a 1-d launch (blockIdx.x * blockDim.x + threadIdx.x), 64-bit.
template <class Ctx>
MATMULVIZ_HD std::int64_t linearThread(Ctx& ctx) {
  return static_cast<std::int64_t>(ctx.blockIdx().x) * ctx.blockDim().x + ctx.threadIdx().x;
}

/// v[i] += value. The engine's simulated launches run one thread at a time (one host thread,
/// simulated_backend.h), so a load and a store are atomic there (counted as one of each); on the
/// GPU, kernels/cuda/device_context.cuh overloads this with atomicAdd, found by argument-dependent
/// lookup on its context.
template <class Ctx, class V, class T>
MATMULVIZ_HD void atomicAddAt(Ctx& ctx, const V& v, std::int64_t i, T value) {
  ctx.store(v, i, ctx.load(v, i) + value);
}

}  // namespace matmulviz::kernels::engine
