#pragma once
// 04 gather_bmm: the fused strategy's kernel, out[n] = a[n] @ c[q[n]] (the forum post), with no
// copy of c[q]. What changed since 02_coalesced: a third, batch coordinate n, and the matrix of
// c each item multiplies is looked up through q inside the kernel. Why it is cheaper: the
// strategies that write c[q] first materialise an [N, J, K] tensor (2 GiB for the seed's
// workload) only to read it once; here each thread reads q[n] and then c[q[n], j, k] in place,
// so the only memory besides the inputs is out. Rows of all items are flattened, r = n*I + i, so
// that the seed's I = 1 leaves no thread idle; x runs over the columns k as in 02 (coalesced).

#include <cstdint>

#include "core/sim/hd.h"
#include "core/sim/launch_config.h"
#include "kernels/matmul_args.h"

namespace matmulviz::kernels {

template <class Ctx>
MATMULVIZ_HD void gatherBmm(Ctx& ctx, const GatherBmmArgs& p) {
  const int k = static_cast<int>(ctx.blockIdx().x * ctx.blockDim().x + ctx.threadIdx().x);
  const std::int64_t r =
      static_cast<std::int64_t>(ctx.blockIdx().y) * ctx.blockDim().y + ctx.threadIdx().y;
  if (r < static_cast<std::int64_t>(p.N) * p.I && k < p.K) {
    const std::int64_t n = r / p.I;           // item
    const std::int64_t i = r % p.I;           // row within the item
    const std::int64_t m = ctx.load(p.q, n);  // which matrix of c
    float tmp = 0.f;
    for (int j = 0; j < p.J; ++j) {
      const float aij = ctx.load(p.a, n, i, j);
      const float cjk = ctx.load(p.c, m, j, k);
      tmp = ctx.fma(aij, cjk, tmp);
    }
    ctx.store(p.out, n, i, k, tmp);
  }
}

/// 04's (and 08's) operands over row-major buffers: a [N, I, J], c [M, J, K], q [N], out
/// [N, I, K], named as diagnostics and traces show them.
inline GatherBmmArgs gatherBmmArgs(const float* a, const float* c, const std::int64_t* q,
                                   float* out, int N, int I, int J, int K, int M) {
  GatherBmmArgs args;
  args.a = sim::view3d<const float>(a, N, I, J, kArrayA, "a");
  args.c = sim::view3d<const float>(c, M, J, K, kArrayB, "c");
  args.q = sim::view1d<const std::int64_t>(q, N, kArrayQ, "q");
  args.out = sim::view3d<float>(out, N, I, K, kArrayC, "out");
  args.N = N;
  args.I = I;
  args.J = J;
  args.K = K;
  args.M = M;
  return args;
}

/// grid (ceil(K/TPB), ceil(N*I/TPB)), block (TPB, TPB). Throws as naiveConfig.
inline sim::LaunchConfig gatherBmmConfig(int N, int I, int K, int tpb) {
  return sim::grid2d(K, static_cast<std::int64_t>(N) * I, tpb);
}

}  // namespace matmulviz::kernels
