#pragma once
// 05 smem_tiled_no_sync: FAULTY ON PURPOSE, a teaching kernel that runs only on the simulator.
// What is wrong: 03_smem_tiled without its second __syncthreads(), the one after the inner
// product that guards the tiles before the next pair is loaded into them. The classic bug: a
// fast thread finishes its TPB products, goes round the loop and overwrites As and Bs while
// slower threads of its block still read the previous pair.
// What the simulator reports: shared-memory races, "writes shared As[r, c] read by thread ...
// with no __syncthreads() between them" (write after read) and reads of cells another thread
// rewrote in the same barrier phase (read after write); no out-of-bounds access, no barrier
// divergence. Its threads run one after the other, so every launch with more than one tile of K
// (K > TPB, TPB > 1) races, and C comes out wrong.
// What a real GPU does: the same race, but timing decides who wins: the result is usually right
// at small sizes and wrong now and then, which is what makes this bug hard to find by testing.

#include "core/sim/hd.h"
#include "kernels/03_smem_tiled.h"
#include "kernels/matmul_args.h"

namespace matmulviz::kernels {

/// smemTiledMatmul with the barrier after the inner product removed. Launch shape, tiles and
/// shared memory as 03: smemTiledConfig and SmemTiles.
template <class Ctx>
MATMULVIZ_HD void smemTiledNoSyncMatmul(Ctx& ctx, const MatmulArgs& p, const SmemTiles& s) {
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
    ctx.store(s.As, ty, tx, a);  // BUG: others may still be reading the previous tile here
    ctx.store(s.Bs, ty, tx, b);
    ctx.syncthreads();  // the tiles are complete
    if (inC) {
      for (int kk = 0; kk < T; ++kk) {
        const float aik = ctx.load(s.As, ty, kk);
        const float bkj = ctx.load(s.Bs, kk, tx);
        tmp = ctx.fma(aik, bkj, tmp);
      }
    }
    // BUG: 03 waits here (ctx.syncthreads()) until everyone is done with the tiles
  }
  if (inC) ctx.store(p.c, i, j, tmp);
}

}  // namespace matmulviz::kernels
