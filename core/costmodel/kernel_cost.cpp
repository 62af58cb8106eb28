#include "core/costmodel/kernel_cost.h"

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <unordered_set>
#include <vector>

#include "core/util/format_units.h"

namespace matmulviz::costmodel {
namespace {

constexpr std::uint64_t kLineBytes = 128;  // an L1 cache line, one wavefront per clock per SM
constexpr int kWarp = 32;
constexpr int kSamples = 32;  // loop iterations sampled per warp (line counts repeat with period)

std::uint64_t u(std::int64_t v) {
  return static_cast<std::uint64_t>(v);
}

/// Distinct 128-byte lines the byte addresses fall in (buffers start on a line).
std::uint64_t lines(const std::vector<std::uint64_t>& addresses) {
  std::unordered_set<std::uint64_t> seen;
  for (const std::uint64_t a : addresses) seen.insert(a / kLineBytes);
  return seen.size();
}

/// A thread of a warp: its coordinates in the block and whether it is inside the problem.
struct Lane {
  std::int64_t x, y;
};

/// Calls `warp(lanes, multiplicity)` for each warp of each kind of block of a 2-D grid over
/// extentX x extentY with tpb x tpb blocks: interior blocks, and the partial ones at the right
/// and bottom edges, each kind once with the number of such blocks. Lanes hold only threads
/// inside the extents; warps without one are skipped. Coordinates are of the kind's first
/// block, so that line counts see a real block's alignment.
void forEachWarp(std::int64_t extentX, std::int64_t extentY, int tpb,
                 const std::function<void(const std::vector<Lane>&, std::uint64_t)>& warp) {
  const std::int64_t T = tpb;
  const std::int64_t fullX = extentX / T, restX = extentX % T;
  const std::int64_t fullY = extentY / T, restY = extentY % T;
  struct Kind {
    std::int64_t count, bx, width;
  };
  const std::vector<Kind> xs = {{fullX, 0, T}, {restX ? 1 : 0, fullX, restX}};
  const std::vector<Kind> ys = {{fullY, 0, T}, {restY ? 1 : 0, fullY, restY}};
  for (const Kind& kx : xs) {
    for (const Kind& ky : ys) {
      if (kx.count == 0 || ky.count == 0) continue;
      const std::uint64_t blocks = u(kx.count) * u(ky.count);
      for (std::int64_t first = 0; first < T * T; first += kWarp) {
        std::vector<Lane> lanes;
        for (std::int64_t l = first; l < std::min(first + kWarp, T * T); ++l) {
          const std::int64_t tx = l % T, ty = l / T;
          if (tx < kx.width && ty < ky.width) lanes.push_back({kx.bx * T + tx, ky.bx * T + ty});
        }
        if (!lanes.empty()) warp(lanes, blocks);
      }
    }
  }
}

/// Lines a loop of `iterations` touches per warp, sampled over the first kSamples iterations
/// and scaled: `address(lane, iteration)` gives each access's byte addresses.
std::uint64_t loopLines(const std::vector<Lane>& lanes, std::int64_t iterations,
                        const std::function<void(const Lane&, std::int64_t,
                                                 std::vector<std::vector<std::uint64_t>>&)>& at) {
  const std::int64_t samples = std::min<std::int64_t>(iterations, kSamples);
  std::uint64_t total = 0;
  std::vector<std::vector<std::uint64_t>> accesses;
  for (std::int64_t it = 0; it < samples; ++it) {
    accesses.clear();
    for (const Lane& lane : lanes) at(lane, it, accesses);
    for (const auto& a : accesses) total += lines(a);
  }
  // total / samples per iteration, times iterations, rounded once at the end
  return (total * u(iterations) + u(samples) / 2) / u(samples);
}

/// Appends `address` to access slot `slot` of `out`.
void put(std::vector<std::vector<std::uint64_t>>& out, std::size_t slot, std::uint64_t address) {
  if (out.size() <= slot) out.resize(slot + 1);
  out[slot].push_back(address);
}

void checkShape(const KernelShape& s) {
  if (s.M < 1 || s.K < 1 || s.N < 1 || s.batch < 1 || s.table < 1)
    throw std::invalid_argument("kernel model: sizes must be at least 1");
  if (s.tpb < 1 || s.tpb > 32) throw std::invalid_argument("kernel model: tpb must be 1..32");
}

bool isCublas(std::string_view kernel) {
  return kernel.starts_with("cublas_");
}

/// kernels/08_grouped_bmm.h: one memset (the buckets' counts and cursor) and four launches. Device
/// memory: a, the matrices of c q can pick and out once each, q read by the histogram and the
/// scatter, the int32 bucket arrays (counts and cursor updated atomically once per item, offsets,
/// rows). On chip: block m stages c[m] (its lines read, then stored to shared memory); then each
/// warp covers 32 / TPB rows of TPB columns (one row when TPB = 32) and, at each j, loads a[n, i,
/// j] (one line per row, a broadcast across the row's threads) and one row of cs, and stores one
/// line per row.
WorkCounts groupedBmmCounts(const KernelShape& s) {
  const std::uint64_t f = 4;
  const std::uint64_t items = u(s.batch), table = u(s.table);
  const std::uint64_t used = u(std::min(s.batch, s.table));
  const std::uint64_t M = u(s.M), K = u(s.K), N = u(s.N), T = u(s.tpb);
  WorkCounts w;
  w.launches = 5;
  w.bytesRead = (items * M * K + used * K * N) * f + 2 * items * 8 +
                (2 * items + 2 * table + 2 * table + items + items) * 4;
  w.bytesWritten = items * M * N * f + (2 * items + table + 1 + items) * 4;
  w.flops = 2 * items * M * N * K;
  const std::uint64_t rowsPerWarp = std::max<std::uint64_t>(1, 32 / T);
  const std::uint64_t columnGroups = (N + T - 1) / T;
  const std::uint64_t warpSteps = (items * M * columnGroups + rowsPerWarp - 1) / rowsPerWarp;
  const std::uint64_t staged = 2 * used * ((K * N * f + kLineBytes - 1) / kLineBytes);
  w.onChipBytes = (staged + warpSteps * (K * (rowsPerWarp + 1) + rowsPerWarp)) * kLineBytes;
  return w;
}

}  // namespace

std::string modelledKernelNames() {
  return "naive|coalesced|smem_tiled|gather_bmm|grouped_bmm|cublas_gemm|cublas_gather_pointers";
}

bool hasKernelModel(std::string_view kernel) {
  return kernel == "naive" || kernel == "coalesced" || kernel == "smem_tiled" ||
         kernel == "gather_bmm" || kernel == "grouped_bmm" || kernel == "cublas_gemm" ||
         kernel == "cublas_gather_pointers";
}

WorkCounts kernelCounts(const KernelShape& s) {
  if (!hasKernelModel(s.kernel))
    throw std::invalid_argument("kernel '" + s.kernel +
                                "' has no cost model; allowed: " + modelledKernelNames());
  checkShape(s);
  const std::uint64_t f = 4;  // float32
  const std::int64_t M = s.M, K = s.K, N = s.N, T = s.tpb;
  WorkCounts w;
  w.launches = 1;
  if (s.kernel == "grouped_bmm") return groupedBmmCounts(s);
  const bool gathered = s.kernel == "gather_bmm" || s.kernel == "cublas_gather_pointers";
  const std::uint64_t items = gathered ? u(s.batch) : 1;
  // Device memory: each input read once (c: the matrices q can pick), the output written once.
  const std::uint64_t cMatrices = gathered ? u(std::min(s.batch, s.table)) : 1;
  w.bytesRead = (items * u(M) * u(K) + cMatrices * u(K) * u(N)) * f + (gathered ? items * 8 : 0);
  w.bytesWritten = items * u(M) * u(N) * f;
  w.flops = 2 * items * u(M) * u(N) * u(K);
  if (isCublas(s.kernel)) return w;

  std::uint64_t onChipLines = 0;
  const auto add = [&](std::uint64_t perWarp, std::uint64_t blocks) {
    onChipLines += perWarp * blocks;
  };
  if (s.kernel == "naive" || s.kernel == "coalesced") {
    // naive: x over rows of C (i), so a warp reads 16 or 32 rows of A at each k; coalesced:
    // x over columns (j), a warp reads a contiguous piece of a row of B.
    const bool naive = s.kernel == "naive";
    forEachWarp(naive ? M : N, naive ? N : M, s.tpb, [&](const std::vector<Lane>& lanes, auto n) {
      const auto ij = [&](const Lane& l) {
        return naive ? std::pair{l.x, l.y} : std::pair{l.y, l.x};
      };
      std::uint64_t perWarp = loopLines(lanes, K, [&](const Lane& l, std::int64_t k, auto& out) {
        const auto [i, j] = ij(l);
        put(out, 0, u(i * K + k) * f);  // A[i, k]
        put(out, 1, u(k * N + j) * f);  // B[k, j]
      });
      std::vector<std::uint64_t> store;
      for (const Lane& l : lanes) store.push_back(u(ij(l).first * N + ij(l).second) * f);
      perWarp += lines(store);  // C[i, j]
      add(perWarp, n);
    });
  } else if (s.kernel == "smem_tiled") {
    // Per tile of T k's: one coalesced load of A and of B into shared memory (two stores there),
    // then T iterations of two shared loads (a broadcast of As[ty][kk], a row of Bs): one line
    // each. Threads outside C still load (their loads are predicated off past the edges).
    const std::int64_t tiles = (K + T - 1) / T;
    forEachWarp(N, M, s.tpb, [&](const std::vector<Lane>& lanes, auto n) {
      std::uint64_t perWarp =
          loopLines(lanes, tiles, [&](const Lane& l, std::int64_t t, auto& out) {
            const std::int64_t tx = l.x % T, ty = l.y % T, k0 = t * T;
            if (k0 + tx < K) put(out, 0, u(l.y * K + k0 + tx) * f);    // A[i, k0 + tx]
            if (k0 + ty < K) put(out, 1, u((k0 + ty) * N + l.x) * f);  // B[k0 + ty, j]
          });
      perWarp += u(tiles) * (2 + 2 * u(T));  // As, Bs stores; T x (As, Bs) loads
      std::vector<std::uint64_t> store;
      for (const Lane& l : lanes) store.push_back(u(l.y * N + l.x) * f);
      perWarp += lines(store);
      add(perWarp, n);
    });
  } else {  // gather_bmm: x over columns of out, y over rows (items x M)
    // Each row r = n * M + i reads a[n, i, :] and c[q[n]] [K, N]; distinct items are taken to
    // pick distinct matrices of c (q is random), so a warp's c loads touch one line per item.
    const std::int64_t rows = u(s.batch) * M;
    forEachWarp(N, rows, s.tpb, [&](const std::vector<Lane>& lanes, auto n) {
      std::uint64_t perWarp = loopLines(lanes, K, [&](const Lane& l, std::int64_t j, auto& out) {
        const std::int64_t item = l.y / M;
        put(out, 0, u(l.y * K + j) * f);               // a[n, i, j]
        put(out, 1, u((item * K + j) * N + l.x) * f);  // c[q[n], j, col]
      });
      std::vector<std::uint64_t> q, store;
      for (const Lane& l : lanes) {
        q.push_back(u(l.y / M) * 8);
        store.push_back(u(l.y * N + l.x) * f);
      }
      add(perWarp + lines(q) + lines(store), n);
    });
  }
  w.onChipBytes = onChipLines * kLineBytes;
  return w;
}

Prediction predictKernel(const KernelShape& shape, const GpuProfile& gpu) {
  const WorkCounts w = kernelCounts(shape);
  const bool blas = isCublas(shape.kernel);
  Prediction p = predict(w, gpu, blas ? gpu.sgemmFlopsPerS : gpu.float32FlopsPerS);
  if (blas) {
    p.explanation += "; cuBLAS at the sgemm rate " + formatRate(gpu.sgemmFlopsPerS, "FLOP") +
                     ", its choice of kernel for this shape not modelled";
  }
  return p;
}

}  // namespace matmulviz::costmodel
