#pragma once
// The engine's fused gathered matmul and its gradients (core/ops/gather_bmm.cpp,
// core/tensor/compute_backend.h): out[n] = a[n] @ c[q[n]], dA[n] = dO[n] @ c[q[n]]^T,
// dC[q[n]] += a[n]^T @ dO[n]. Any strides and float/double, unlike kernels/04_gather_bmm.h (the
// lesson's float32 variant); one thread per output element, the dC sum added atomically.

#include <cstdint>

#include "core/sim/views.h"
#include "kernels/engine/strided.h"

namespace matmulviz::kernels::engine {

template <class T>
struct GatherBmmOperands {
  sim::GlobalView<T> out;      ///< out, dA or dC: contiguous from outOffset
  sim::GlobalView<const T> x;  ///< a (forward, dC) or dO (dA)
  sim::GlobalView<const T> y;  ///< c (forward, dA) or dO (dC)
  sim::GlobalView<const std::int64_t> q;
  Strided xLayout, yLayout;  ///< 3-d
  std::int64_t qOffset = 0, qStride = 1, outOffset = 0;
  std::int64_t N = 0, I = 0, J = 0, K = 0;
};

/// out[n, i, k] = sum_j a[n, i, j] c[q[n], j, k]; x = a, y = c.
template <class Ctx, class T>
MATMULVIZ_HD void gatherBmmForwardKernel(Ctx& ctx, const GatherBmmOperands<T>& p) {
  const std::int64_t e = linearThread(ctx);
  if (e >= p.N * p.I * p.K) return;
  const std::int64_t k = e % p.K, i = (e / p.K) % p.I, n = e / (p.K * p.I);
  const std::int64_t m = ctx.load(p.q, p.qOffset + n * p.qStride);
  T acc{};
  for (std::int64_t j = 0; j < p.J; ++j)
    acc += ctx.load(p.x, p.xLayout.at3(n, i, j)) * ctx.load(p.y, p.yLayout.at3(m, j, k));
  ctx.store(p.out, p.outOffset + e, acc);
}

/// dA[n, i, j] = sum_k dO[n, i, k] c[q[n], j, k]; x = dO, y = c.
template <class Ctx, class T>
MATMULVIZ_HD void gatherBmmGradAKernel(Ctx& ctx, const GatherBmmOperands<T>& p) {
  const std::int64_t e = linearThread(ctx);
  if (e >= p.N * p.I * p.J) return;
  const std::int64_t j = e % p.J, i = (e / p.J) % p.I, n = e / (p.J * p.I);
  const std::int64_t m = ctx.load(p.q, p.qOffset + n * p.qStride);
  T acc{};
  for (std::int64_t k = 0; k < p.K; ++k)
    acc += ctx.load(p.x, p.xLayout.at3(n, i, k)) * ctx.load(p.y, p.yLayout.at3(m, j, k));
  ctx.store(p.out, p.outOffset + e, acc);
}

/// dC[q[n], j, k] += sum_i a[n, i, j] dO[n, i, k]; x = a, y = dO; one thread per (n, j, k).
template <class Ctx, class T>
MATMULVIZ_HD void gatherBmmGradCKernel(Ctx& ctx, const GatherBmmOperands<T>& p) {
  const std::int64_t e = linearThread(ctx);
  if (e >= p.N * p.J * p.K) return;
  const std::int64_t k = e % p.K, j = (e / p.K) % p.J, n = e / (p.K * p.J);
  const std::int64_t m = ctx.load(p.q, p.qOffset + n * p.qStride);
  T acc{};
  for (std::int64_t i = 0; i < p.I; ++i)
    acc += ctx.load(p.x, p.xLayout.at3(n, i, j)) * ctx.load(p.y, p.yLayout.at3(n, i, k));
  atomicAddAt(ctx, p.out, p.outOffset + (m * p.J + j) * p.K + k, acc);
}

}  // namespace matmulviz::kernels::engine
