#pragma once
// Advanced indexing along dim 0 (t[index]) and its backward (index_put_ with accumulate):
// core/tensor/compute_backend.h indexRows and indexAddRows. One thread per element of the
// gathered rows; a negative index counts from the end, as in PyTorch (bounds were checked on
// the host before the launch).

#include <cstdint>

#include "core/sim/views.h"
#include "kernels/engine/strided.h"

namespace matmulviz::kernels::engine {

template <class T>
struct IndexArgs {
  sim::GlobalView<T> out;        ///< gather: [count, inner] contiguous; scatter: [rows, inner]
  sim::GlobalView<const T> src;  ///< gather: t; scatter: g
  sim::GlobalView<const std::int64_t> index;
  std::int64_t indexOffset = 0;  ///< storage offset of index[0] (contiguous)
  std::int64_t outOffset = 0;
  Strided srcRow;  ///< gather: t's dims 1.. (offset: t's); scatter: g as [count, inner]
  std::int64_t srcRowStride = 0;  ///< gather: t's stride(0)
  std::int64_t rows = 0;          ///< size of the indexed dim
  std::int64_t inner = 1;         ///< elements per row
  std::int64_t count = 0;         ///< indices
};

template <class Ctx>
MATMULVIZ_HD std::int64_t rowOf(Ctx& ctx, const sim::GlobalView<const std::int64_t>& index,
                                std::int64_t at, std::int64_t rows) {
  const std::int64_t r = ctx.load(index, at);
  return r < 0 ? r + rows : r;
}

/// out[i, k] = t[index[i], k].
template <class Ctx, class T>
MATMULVIZ_HD void indexRowsKernel(Ctx& ctx, const IndexArgs<T>& p) {
  const std::int64_t e = linearThread(ctx);
  if (e >= p.count * p.inner) return;
  const std::int64_t i = e / p.inner, k = e % p.inner;
  const std::int64_t r = rowOf(ctx, p.index, p.indexOffset + i, p.rows);
  ctx.store(p.out, p.outOffset + e, ctx.load(p.src, r * p.srcRowStride + p.srcRow.at(k)));
}

/// out[index[i], k] += g[i, k]; rows named twice are added atomically.
template <class Ctx, class T>
MATMULVIZ_HD void indexAddRowsKernel(Ctx& ctx, const IndexArgs<T>& p) {
  const std::int64_t e = linearThread(ctx);
  if (e >= p.count * p.inner) return;
  const std::int64_t i = e / p.inner, k = e % p.inner;
  const std::int64_t r = rowOf(ctx, p.index, p.indexOffset + i, p.rows);
  atomicAddAt(ctx, p.out, p.outOffset + r * p.inner + k, ctx.load(p.src, p.srcRow.at(e)));
}

}  // namespace matmulviz::kernels::engine
