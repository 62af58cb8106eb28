#pragma once
// 07 smem_tiled_divergent_barrier: FAULTY ON PURPOSE, a teaching kernel that runs only on the
// simulator. What is wrong: 03_smem_tiled with both __syncthreads() moved inside the
// `if (i < M && j < N)` that only the threads inside C take ("idle threads need not wait"). Every
// thread of a block must reach the same barriers: here the threads past the edge of C stage
// their tiles, skip both barriers and run on to the end, while the others wait for them.
// What the simulator reports: barrier divergence in every block that straddles an edge of C,
// once per barrier phase (2 per tile of K): "thread (x, y, 0) has exited ... n of TPB^2 threads
// exited". It lets the block go on without them, so the idle threads' tile cells hold whatever
// they last staged and C comes out wrong. Blocks wholly inside C are fine.
// What a real GPU does: undefined behaviour. Depending on the architecture the block hangs, or
// the barrier lets the waiting threads through early and they read stale or half-written tiles.

#include "core/sim/hd.h"
#include "kernels/03_smem_tiled.h"
#include "kernels/matmul_args.h"

namespace matmulviz::kernels {

/// smemTiledMatmul with its barriers inside `if (inC)`. Launch shape, tiles and shared memory as
/// 03: smemTiledConfig and SmemTiles.
template <class Ctx>
MATMULVIZ_HD void smemTiledDivergentBarrierMatmul(Ctx& ctx, const MatmulArgs& p,
                                                  const SmemTiles& s) {
  const int T = static_cast<int>(ctx.blockDim().x);  // TPB; blockDim is (TPB, TPB)
  const int tx = static_cast<int>(ctx.threadIdx().x);
  const int ty = static_cast<int>(ctx.threadIdx().y);
  const int j = static_cast<int>(ctx.blockIdx().x) * T + tx;  // column of C
  const int i = static_cast<int>(ctx.blockIdx().y) * T + ty;  // row of C
  const bool inC = i < p.M && j < p.N;
  float tmp = 0.f;
  for (int k0 = 0; k0 < p.K; k0 += T) {
    const int ka = k0 + tx;
    const int kb = k0 + ty;
    const float a = (i < p.M && ka < p.K) ? ctx.load(p.a, i, ka) : 0.f;
    const float b = (kb < p.K && j < p.N) ? ctx.load(p.b, kb, j) : 0.f;
    ctx.store(s.As, ty, tx, a);
    ctx.store(s.Bs, ty, tx, b);
    if (inC) {
      ctx.syncthreads();  // BUG: a barrier only the threads inside C reach
      for (int kk = 0; kk < T; ++kk) {
        const float aik = ctx.load(s.As, ty, kk);
        const float bkj = ctx.load(s.Bs, kk, tx);
        tmp = ctx.fma(aik, bkj, tmp);
      }
      ctx.syncthreads();  // BUG: the same
    }
  }
  if (inC) ctx.store(p.c, i, j, tmp);
}

}  // namespace matmulviz::kernels
