#pragma once
// 02 coalesced: what changed since 01_naive: x runs over the columns of C instead of its rows,
// so the grid is (ceil(N/TPB), ceil(M/TPB)). Why it is faster: the 32 threads of a warp now
// share the row i and take consecutive columns j, so their loads of B[k, j] and stores of
// C[i, j] fall on consecutive addresses (one 128-byte transaction per warp instead of 32) and
// their load of A[i, k] is one broadcast. The work per thread is unchanged: still 2K global
// loads for K FMAs, which 03_smem_tiled addresses.

#include "core/sim/hd.h"
#include "core/sim/launch_config.h"
#include "kernels/matmul_args.h"

namespace matmulviz::kernels {

template <class Ctx>
MATMULVIZ_HD void coalescedMatmul(Ctx& ctx, const MatmulArgs& p) {
  const int j = static_cast<int>(ctx.blockIdx().x * ctx.blockDim().x + ctx.threadIdx().x);
  const int i = static_cast<int>(ctx.blockIdx().y * ctx.blockDim().y + ctx.threadIdx().y);
  if (i < p.M && j < p.N) {
    float tmp = 0.f;
    for (int k = 0; k < p.K; ++k) {
      const float aik = ctx.load(p.a, i, k);
      const float bkj = ctx.load(p.b, k, j);
      tmp = ctx.fma(aik, bkj, tmp);
    }
    ctx.store(p.c, i, j, tmp);
  }
}

/// grid (ceil(N/TPB), ceil(M/TPB)), block (TPB, TPB): x over columns. Throws as naiveConfig.
inline sim::LaunchConfig coalescedConfig(int M, int N, int tpb) {
  return sim::grid2d(N, M, tpb);
}

}  // namespace matmulviz::kernels
