#pragma once
// What a kernel body sees of memory: global arrays (row-major, up to three dims) and shared-memory
// tiles (row-major, two dims). The same structs are used on the GPU, where the thread context
// dereferences them directly, and in the simulator, where every access is bounds-checked,
// race-checked (shared) and optionally traced. A view never owns its data.

#include <cstdint>

#include "core/sim/hd.h"

namespace matmulviz::sim {

/// CUDA's dim3 / uint3 as plain data: gridDim, blockDim, blockIdx, threadIdx.
struct Dim3 {
  unsigned x = 1;
  unsigned y = 1;
  unsigned z = 1;
};

/// A global-memory array: `data` row-major with `rank` dims `sizes[0..rank)`, contiguous (the
/// leading dimension of a row is sizes[rank-1]). `id` indexes the launch's array table
/// (diagnostics, traces); `name` is the name a person reads in a diagnostic ("a", "c[q]").
template <class T>
struct GlobalView {
  T* data = nullptr;
  std::int64_t sizes[3] = {1, 1, 1};
  int rank = 1;
  int id = 0;
  const char* name = "";

  MATMULVIZ_HD std::int64_t offset(std::int64_t i0) const { return i0; }
  MATMULVIZ_HD std::int64_t offset(std::int64_t i0, std::int64_t i1) const {
    return i0 * sizes[1] + i1;
  }
  MATMULVIZ_HD std::int64_t offset(std::int64_t i0, std::int64_t i1, std::int64_t i2) const {
    return (i0 * sizes[1] + i1) * sizes[2] + i2;
  }
};

/// Views of a contiguous row-major buffer; see GlobalView for `id` and `name`.
template <class T>
GlobalView<T> view1d(T* data, std::int64_t n, int id, const char* name) {
  return GlobalView<T>{data, {n, 1, 1}, 1, id, name};
}
template <class T>
GlobalView<T> view2d(T* data, std::int64_t rows, std::int64_t cols, int id, const char* name) {
  return GlobalView<T>{data, {rows, cols, 1}, 2, id, name};
}
template <class T>
GlobalView<T> view3d(T* data, std::int64_t n, std::int64_t rows, std::int64_t cols, int id,
                     const char* name) {
  return GlobalView<T>{data, {n, rows, cols}, 3, id, name};
}

/// A tile in the block's shared memory: `rows x cols`, row-major, `data` inside the block's
/// shared buffer (carved by the kernel's tile layout from the dynamic shared memory base).
template <class T>
struct SharedView {
  T* data = nullptr;
  int rows = 0;
  int cols = 0;
  int id = 0;
  const char* name = "";

  MATMULVIZ_HD std::int64_t offset(std::int64_t r, std::int64_t c) const { return r * cols + c; }
};

}  // namespace matmulviz::sim
