#pragma once
// 03 smem_tiled: what changed since 02_coalesced: the block stages a TPB x TPB tile of A and
// one of B in shared memory, waits at a barrier, and every thread then reads its TPB products
// from shared memory; a second barrier guards the tiles before the next pair is loaded. Why it
// is faster: each element loaded from global memory is reused by TPB threads, so global loads
// drop from 2K to 2K/TPB per thread (arithmetic intensity up TPB-fold) and shared memory
// answers in a few cycles. Tiles past the edge of A or B are filled with zeros, so any M, K, N
// works; every thread of the block, in range or not, takes part in loading and in both barriers,
// and only the threads inside C compute (at the lesson's N = 10 with TPB 16, 6 of every 16
// columns are past the edge: their products of zeros would be 37% of the block's work).

#include <cstddef>

#include "core/sim/hd.h"
#include "core/sim/launch_config.h"
#include "kernels/matmul_args.h"

namespace matmulviz::kernels {

/// The block's two tiles, carved from its dynamic shared memory.
struct SmemTiles {
  sim::SharedView<float> As;  // [TPB, TPB]: A[rowBase + r, k0 + c]
  sim::SharedView<float> Bs;  // [TPB, TPB]: B[k0 + r, colBase + c]

  MATMULVIZ_HD static std::size_t bytes(int tpb) {
    return 2 * static_cast<std::size_t>(tpb) * tpb * sizeof(float);
  }
  MATMULVIZ_HD static SmemTiles carve(void* base, int tpb) {
    float* f = static_cast<float*>(base);
    return SmemTiles{{f, tpb, tpb, kArrayAs, "As"}, {f + tpb * tpb, tpb, tpb, kArrayBs, "Bs"}};
  }
};

template <class Ctx>
MATMULVIZ_HD void smemTiledMatmul(Ctx& ctx, const MatmulArgs& p, const SmemTiles& s) {
  const int T = static_cast<int>(ctx.blockDim().x);  // TPB; blockDim is (TPB, TPB)
  const int tx = static_cast<int>(ctx.threadIdx().x);
  const int ty = static_cast<int>(ctx.threadIdx().y);
  const int j = static_cast<int>(ctx.blockIdx().x) * T + tx;  // column of C
  const int i = static_cast<int>(ctx.blockIdx().y) * T + ty;  // row of C
  const bool inC = i < p.M && j < p.N;
  float tmp = 0.f;
  for (int k0 = 0; k0 < p.K; k0 += T) {
    const int ka = k0 + tx;  // column of A this thread stages
    const int kb = k0 + ty;  // row of B this thread stages
    const float a = (i < p.M && ka < p.K) ? ctx.load(p.a, i, ka) : 0.f;
    const float b = (kb < p.K && j < p.N) ? ctx.load(p.b, kb, j) : 0.f;
    ctx.store(s.As, ty, tx, a);  // As[ty, tx] = A[i, k0 + tx]
    ctx.store(s.Bs, ty, tx, b);  // Bs[ty, tx] = B[k0 + ty, j]
    ctx.syncthreads();           // the tiles are complete
    if (inC) {                   // a thread past the edge of C helped load; it computes nothing
      for (int kk = 0; kk < T; ++kk) {
        const float aik = ctx.load(s.As, ty, kk);
        const float bkj = ctx.load(s.Bs, kk, tx);
        tmp = ctx.fma(aik, bkj, tmp);
      }
    }
    ctx.syncthreads();  // everyone is done with the tiles before they are overwritten
  }
  if (inC) ctx.store(p.c, i, j, tmp);
}

/// grid (ceil(N/TPB), ceil(M/TPB)), block (TPB, TPB), 2 TPB^2 floats of shared memory.
inline sim::LaunchConfig smemTiledConfig(int M, int N, int tpb) {
  sim::LaunchConfig config = sim::grid2d(N, M, tpb);
  config.sharedBytes = SmemTiles::bytes(tpb);
  return config;
}

}  // namespace matmulviz::kernels
