#pragma once
// A strided batched GEMM, out[b] = a[b] @ b[b], one thread per output element: the simulated
// device's mm/bmm (the CUDA backend calls cuBLAS instead). Accumulates in T, as BLAS does.

#include <cstdint>

#include "core/sim/views.h"
#include "kernels/engine/strided.h"

namespace matmulviz::kernels::engine {

template <class T>
struct GemmArgs {
  sim::GlobalView<T> out;  ///< [B, n, p] contiguous from outOffset
  sim::GlobalView<const T> a;
  sim::GlobalView<const T> b;
  Strided aLayout;  ///< [B, n, m]
  Strided bLayout;  ///< [B, m, p]
  std::int64_t outOffset = 0;
  std::int64_t B = 0, n = 0, m = 0, p = 0;
};

template <class Ctx, class T>
MATMULVIZ_HD void gemmKernel(Ctx& ctx, const GemmArgs<T>& g) {
  const std::int64_t e = linearThread(ctx);
  if (e >= g.B * g.n * g.p) return;
  const std::int64_t j = e % g.p, i = (e / g.p) % g.n, b = e / (g.p * g.n);
  T acc{};
  for (std::int64_t k = 0; k < g.m; ++k)
    acc += ctx.load(g.a, g.aLayout.at3(b, i, k)) * ctx.load(g.b, g.bLayout.at3(b, k, j));
  ctx.store(g.out, g.outOffset + e, acc);
}

}  // namespace matmulviz::kernels::engine
