#pragma once
// 01 naive: the kernel of the fast.ai lesson "Finishing up Matmul", the baseline every later
// variant improves on. Thread (i, j) = cuda.grid(2) computes C[i, j] with x over the rows of C,
// behind the bounds check `if i < M and j < N`, in TPB x TPB blocks on a grid of (ceil(M/TPB),
// ceil(N/TPB)). Each thread reads a whole row of A and a whole column of B from global memory (2K
// loads for K FMAs, arithmetic intensity 1/4 FLOP per byte). Neighbouring threads of a warp differ
// in x, that is in the row i: their loads of A[i, k] are K floats apart and their stores of C[i, j]
// N floats apart, so none of a warp's accesses coalesce into one transaction.

#include "core/sim/hd.h"
#include "core/sim/launch_config.h"
#include "kernels/matmul_args.h"

namespace matmulviz::kernels {

template <class Ctx>
MATMULVIZ_HD void naiveMatmul(Ctx& ctx, const MatmulArgs& p) {
  const int i = static_cast<int>(ctx.blockIdx().x * ctx.blockDim().x + ctx.threadIdx().x);
  const int j = static_cast<int>(ctx.blockIdx().y * ctx.blockDim().y + ctx.threadIdx().y);
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

/// grid (ceil(M/TPB), ceil(N/TPB)), block (TPB, TPB): x over rows. Throws std::invalid_argument
/// for TPB outside 1..32 or a grid beyond CUDA's limits.
inline sim::LaunchConfig naiveConfig(int M, int N, int tpb) {
  return sim::grid2d(M, N, tpb);
}

}  // namespace matmulviz::kernels
