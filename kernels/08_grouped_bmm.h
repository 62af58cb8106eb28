#pragma once
// 08 grouped_bmm: out[n] = a[n] @ c[q[n]] as a grouped GEMM, the way mixture-of-experts layers
// multiply tokens by the expert each is routed to. What changed since 04_gather_bmm: the items
// are first bucketed by q on the device, in three small launches (a histogram of q, a prefix sum
// of the histogram, a scatter of item ids into their buckets), and the multiplication then runs
// one block per matrix of c: the block copies its c[m] into shared memory once and multiplies
// every row routed to m against it. Why it is faster: in 04 every thread reads its column of
// c[q[n]] from global memory, so c is read once per item (N * J * K floats, 2 GiB for the seed's
// workload, served mostly by the cache); here each used c[m] is read once in all (32 MiB), and
// the products read it from shared memory. What remains is a, out and c once, plus the small
// index arrays: the memory floor of the problem.
//
// The order of item ids within a bucket depends on the order in which the scatter's threads
// arrive at their atomicAdd; out does not (each row is computed by one thread, whatever its
// place). One block per bucket is the lesson's simplification: a bucket with far more rows than
// the average keeps one block busy while the others are done (production grouped GEMMs split
// such buckets into tiles of rows).

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "core/ops/grouped_bmm_rule.h"
#include "core/sim/hd.h"
#include "core/sim/launch_config.h"
#include "core/sim/views.h"
#include "kernels/matmul_args.h"

namespace matmulviz::kernels {

/// 04's operands plus the buckets: counts [M] and cursor [M] zero before the first launch,
/// offsets [M + 1] (bucket m holds rows[offsets[m] .. offsets[m + 1])), rows [N] (item ids
/// grouped by bucket).
struct GroupedBmmArgs {
  GatherBmmArgs g;
  sim::GlobalView<int> counts;
  sim::GlobalView<int> offsets;
  sim::GlobalView<int> cursor;
  sim::GlobalView<int> rows;
};

/// Ids of 08's own arrays in the launch's array table (after matmul_args.h's).
enum GroupedArrayId : int {
  kArrayCounts = 6,
  kArrayOffsets = 7,
  kArrayCursor = 8,
  kArrayRows = 9,
  kArraySums = 10,
  kArrayCs = 11
};

/// 08's operands over `buckets`: GroupedBmmWorkspace::ints(N, M) ints laid out as that struct
/// says (counts, offsets, cursor, rows), all zero before the first launch. The simulator's
/// registry, the CUDA runner and the engine carve them alike.
inline GroupedBmmArgs groupedBmmArgs(const GatherBmmArgs& g, int* buckets) {
  using W = GroupedBmmWorkspace;
  const std::int64_t M = g.M;
  GroupedBmmArgs p;
  p.g = g;
  p.counts = sim::view1d<int>(buckets + W::counts(M), M, kArrayCounts, "counts");
  p.offsets = sim::view1d<int>(buckets + W::offsets(M), M + 1, kArrayOffsets, "offsets");
  p.cursor = sim::view1d<int>(buckets + W::cursor(M), M, kArrayCursor, "cursor");
  p.rows = sim::view1d<int>(buckets + W::rows(M), g.N, kArrayRows, "rows");
  return p;
}

/// Step 1, the histogram: counts[m] += 1 for every item n with q[n] = m, one thread per item.
template <class Ctx>
MATMULVIZ_HD void groupHistogram(Ctx& ctx, const GroupedBmmArgs& p) {
  const std::int64_t n =
      static_cast<std::int64_t>(ctx.blockIdx().x) * ctx.blockDim().x + ctx.threadIdx().x;
  if (n < p.g.N) ctx.atomicAdd(p.counts, ctx.load(p.g.q, n), 1);
}

/// Step 2, the prefix sum: offsets[m] = counts[0] + ... + counts[m - 1], offsets[M] = N, in one
/// block of T threads. Thread t adds up its run of ceil(M / T) counts; the block scans the T
/// sums in shared memory (Hillis and Steele: log2 T rounds, each adding the sum `stride` places
/// back, reading one row of `sums` and writing the other, a barrier between rounds); then each
/// thread writes the offsets of its run. `sums`, [2, T] ints, is the block's dynamic shared
/// memory (`extern __shared__ int sums[]` in CUDA).
template <class Ctx>
MATMULVIZ_HD void groupOffsets(Ctx& ctx, const GroupedBmmArgs& p) {
  const int T = static_cast<int>(ctx.blockDim().x);
  const sim::SharedView<int> sums{static_cast<int*>(ctx.sharedMemory()), 2, T, kArraySums, "sums"};
  const int t = static_cast<int>(ctx.threadIdx().x);
  const std::int64_t run = (static_cast<std::int64_t>(p.g.M) + T - 1) / T;
  const std::int64_t first = t * run;
  const std::int64_t last = first + run < p.g.M ? first + run : p.g.M;
  int own = 0;
  for (std::int64_t m = first; m < last; ++m) own += ctx.load(p.counts, m);
  ctx.store(sums, 0, t, own);
  ctx.syncthreads();
  int from = 0;
  for (int stride = 1; stride < T; stride *= 2) {
    int v = ctx.load(sums, from, t);
    if (t >= stride) v += ctx.load(sums, from, t - stride);
    ctx.store(sums, 1 - from, t, v);
    ctx.syncthreads();
    from = 1 - from;
  }
  int offset = ctx.load(sums, from, t) - own;  // the sum of the runs before this one
  for (std::int64_t m = first; m < last; ++m) {
    ctx.store(p.offsets, m, offset);
    offset += ctx.load(p.counts, m);
  }
  if (t == T - 1) ctx.store(p.offsets, p.g.M, offset);  // = N
}

/// Step 3, the scatter: item n takes the next free place of its bucket,
/// rows[offsets[q[n]] + atomicAdd(&cursor[q[n]], 1)] = n, one thread per item.
template <class Ctx>
MATMULVIZ_HD void groupScatter(Ctx& ctx, const GroupedBmmArgs& p) {
  const std::int64_t n =
      static_cast<std::int64_t>(ctx.blockIdx().x) * ctx.blockDim().x + ctx.threadIdx().x;
  if (n >= p.g.N) return;
  const std::int64_t m = ctx.load(p.g.q, n);
  const int place = ctx.atomicAdd(p.cursor, m, 1);
  ctx.store(p.rows, static_cast<std::int64_t>(ctx.load(p.offsets, m)) + place, static_cast<int>(n));
}

/// Step 4, the grouped product: block m copies c[m] into shared memory (`cs`, [J, K]; thread
/// (x, y) copies the elements (j, k) with j = y, y + TPB, ... and k = x, x + TPB, ..., so a
/// warp reads consecutive k), waits at the barrier, then multiplies the rows routed to m: row
/// r = (place in the bucket) * I + i goes to threadIdx.y = r mod TPB, and threadIdx.x runs over
/// the columns k. A bucket no item uses leaves at once, every thread of the block alike, before
/// the barrier. `cs` is the block's dynamic shared memory.
template <class Ctx>
MATMULVIZ_HD void groupedBmm(Ctx& ctx, const GroupedBmmArgs& p) {
  const sim::SharedView<float> cs{static_cast<float*>(ctx.sharedMemory()), p.g.J, p.g.K, kArrayCs,
                                  "cs"};
  const int T = static_cast<int>(ctx.blockDim().x);  // TPB; blockDim is (TPB, TPB)
  const int tx = static_cast<int>(ctx.threadIdx().x);
  const int ty = static_cast<int>(ctx.threadIdx().y);
  const std::int64_t m = ctx.blockIdx().x;
  const int begin = ctx.load(p.offsets, m);
  const int end = ctx.load(p.offsets, m + 1);
  if (begin >= end) return;
  for (int j = ty; j < p.g.J; j += T) {
    for (int k = tx; k < p.g.K; k += T) ctx.store(cs, j, k, ctx.load(p.g.c, m, j, k));
  }
  ctx.syncthreads();  // c[m] is in shared memory
  const std::int64_t rowsHere = static_cast<std::int64_t>(end - begin) * p.g.I;
  for (std::int64_t r = ty; r < rowsHere; r += T) {
    const std::int64_t n = ctx.load(p.rows, begin + r / p.g.I);
    const std::int64_t i = r % p.g.I;
    for (int k = tx; k < p.g.K; k += T) {
      float tmp = 0.f;
      for (int j = 0; j < p.g.J; ++j)
        tmp = ctx.fma(ctx.load(p.g.a, n, i, j), ctx.load(cs, j, k), tmp);
      ctx.store(p.g.out, n, i, k, tmp);
    }
  }
}

/// The shapes of 08's four launches for TPB x TPB blocks. Each throws std::invalid_argument as
/// sim::grid2d does (TPB outside 1..32, CUDA's limits); groupedBmm's when c[m], J * K floats,
/// does not fit the 48 KiB of shared memory a launch gets.
struct GroupedBmmConfigs {
  sim::LaunchConfig histogram;  ///< ceil(N / TPB^2) blocks of TPB^2 threads
  sim::LaunchConfig offsets;    ///< 1 block of TPB^2 threads, [2, TPB^2] ints shared
  sim::LaunchConfig scatter;    ///< as histogram
  sim::LaunchConfig grouped;    ///< M blocks of (TPB, TPB), J * K floats shared

  static GroupedBmmConfigs of(int N, int J, int K, int M, int tpb) {
    GroupedBmmConfigs g;
    g.grouped = sim::grid2d(1, 1, tpb);  // one (TPB, TPB) block; throws for a TPB outside 1..32
    const int threads = tpb * tpb;
    g.histogram.gridDim.x = static_cast<unsigned>(sim::blocksFor(N, threads));
    g.histogram.blockDim.x = static_cast<unsigned>(threads);
    sim::validate(g.histogram);
    g.scatter = g.histogram;
    g.offsets.blockDim.x = static_cast<unsigned>(threads);
    g.offsets.sharedBytes = 2 * static_cast<std::size_t>(threads) * sizeof(int);
    g.grouped.gridDim.x = static_cast<unsigned>(M);
    g.grouped.sharedBytes = static_cast<std::size_t>(J) * K * sizeof(float);
    if (g.grouped.sharedBytes > sim::CudaLimits::maxSharedBytesPerBlock) {
      throw std::invalid_argument(
          "grouped_bmm keeps one matrix of c in shared memory: " + std::to_string(J) + " x " +
          std::to_string(K) + " floats (" + std::to_string(g.grouped.sharedBytes) +
          " bytes), more than the 49152 bytes (48 KiB) a launch gets; "
          "gather_bmm reads c from global memory and has no such limit");
    }
    sim::validate(g.grouped);
    return g;
  }
};

}  // namespace matmulviz::kernels
