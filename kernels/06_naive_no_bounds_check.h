#pragma once
// 06 naive_no_bounds_check: FAULTY ON PURPOSE, a teaching kernel that runs only on the simulator.
// What is wrong: 01_naive without its bounds check `if (i < M && j < N)`. The grid is rounded up
// to whole TPB x TPB blocks, so unless TPB divides M and N some threads sit past the edge of C:
// a thread with i >= M reads K elements past the end of A's rows, one with j >= N K elements
// past B's columns, and each of them writes one element outside C.
// What the simulator reports: out-of-bounds accesses, at the lesson's 5x784x10 with TPB 16
// "thread (5, 0, 0): reads global A[5, 0] outside its shape [5, 784] (read gives 0; 784 more by
// this thread)": every bad read gives 0 and every bad write is dropped, so C comes out right and
// nothing outside the arrays is touched; no race, no barrier divergence. When TPB divides M and
// N no thread lies outside C and nothing is reported: the bug hides until the sizes change.
// What a real GPU does: reads and writes whatever lies past the arrays: neighbouring rows, other
// buffers, or an illegal-address fault that kills the context (compute-sanitizer names it).

#include "core/sim/hd.h"
#include "kernels/01_naive.h"
#include "kernels/matmul_args.h"

namespace matmulviz::kernels {

/// naiveMatmul without the bounds check. Launch shape as 01: naiveConfig (x over rows).
template <class Ctx>
MATMULVIZ_HD void naiveNoBoundsCheckMatmul(Ctx& ctx, const MatmulArgs& p) {
  const int i = static_cast<int>(ctx.blockIdx().x * ctx.blockDim().x + ctx.threadIdx().x);
  const int j = static_cast<int>(ctx.blockIdx().y * ctx.blockDim().y + ctx.threadIdx().y);
  // BUG: 01 guards the rest with `if (i < M && j < N)`
  float tmp = 0.f;
  for (int k = 0; k < p.K; ++k) {
    const float aik = ctx.load(p.a, i, k);  // outside A when i >= M
    const float bkj = ctx.load(p.b, k, j);  // outside B when j >= N
    tmp = ctx.fma(aik, bkj, tmp);
  }
  ctx.store(p.c, i, j, tmp);  // outside C when i >= M or j >= N
}

}  // namespace matmulviz::kernels
