// The fused gathered batched matmul: out[n] = a[n] @ c[q[n]] with no copy of c[q].
// On the host, rows are grouped by q with a counting sort so each distinct index m becomes one
// GEMM: [count_m * I, J] @ c[m] [J, K]. The grouping and the packed rows are host work buffers
// of the CPU backend; device memory holds only what a GPU kernel would need: q's device copy,
// the output, and in backward dA and dC (see kernels/04_gather_bmm.h for the GPU kernel).
// FLOPs (core/ops/flop_counter.h) count as the bmm it replaces: 2 * N * I * J * K, under
// "matmulviz.gather_bmm", and the same per gradient under "matmulviz.gather_bmm_backward".
#include "core/autograd/grad_mode.h"
#include "core/autograd/node.h"
#include "core/ops/flop_counter.h"
#include "core/ops/grouped_bmm_rule.h"
#include "core/ops/ops.h"
#include "core/ops/strided_loop.h"
#include "core/util/blas.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <limits>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace matmulviz {

namespace {

/// Rows of a [N, ...] problem grouped by their index q[n] in [0, M): a counting sort.
struct Groups {
  std::vector<int64_t> offsets;  // [M + 1]: group m is order[offsets[m] .. offsets[m+1])
  std::vector<int64_t> order;    // [N]: n sorted by q[n], stable
};

Groups groupByIndex(const Tensor& q, int64_t M) {
  const Tensor qc = q.isContiguous() ? q : clone(q, MemoryFormat::Contiguous);
  const auto* p = qc.data<int64_t>();
  const int64_t N = qc.numel();
  Groups g;
  g.offsets.assign(static_cast<size_t>(M + 1), 0);
  for (int64_t n = 0; n < N; ++n) ++g.offsets[p[n] + 1];
  for (int64_t m = 0; m < M; ++m) g.offsets[m + 1] += g.offsets[m];
  g.order.resize(static_cast<size_t>(N));
  std::vector<int64_t> next(g.offsets.begin(), g.offsets.end() - 1);
  for (int64_t n = 0; n < N; ++n) g.order[next[p[n]]++] = n;
  return g;
}

/// Whether the [rows, cols] matrix x[n] is dense row-major (so memcpy and BLAS read it as is).
bool denseInner(const Tensor& x) {
  return (x.size(2) <= 1 || x.stride(2) == 1) && (x.size(1) <= 1 || x.stride(1) == x.size(2));
}

/// How many matrices ahead pack and unpack ask for: rows of `a` and `out` are read and written in
/// the order of q, which the hardware prefetcher cannot follow (copying them is about a third
/// of the fused forward's time at the seed's shape, perf, 2026-11-29).
constexpr int64_t kPrefetchAhead = 8;

/// Asks for the `bytes` at `p` (read: rw 0, write: rw 1), one request per 64-byte line; a
/// matrix larger than 1 KiB is left to the hardware prefetcher, which follows it once started.
template <int rw>
inline void prefetchMatrix(const void* p, size_t bytes) {
  const char* c = static_cast<const char*>(p);
  const size_t lines = std::min<size_t>(bytes, 1024);
  for (size_t off = 0; off < lines; off += 64) __builtin_prefetch(c + off, rw, 3);
}

/// Packs the [rows, cols] matrices x[n] for n in `ns` into dense `dst` ([ns * rows, cols]).
template <typename T, typename Acc>
void pack(const Tensor& x, const int64_t* ns, int64_t count, std::vector<Acc>& dst) {
  const int64_t rows = x.size(1), cols = x.size(2);
  const int64_t block = rows * cols;
  dst.resize(static_cast<size_t>(count * block));
  if (block == 0) return;
  Acc* d = dst.data();
  if constexpr (std::is_same_v<typename T::Stored, Acc>) {
    if (denseInner(x)) {  // the common case: one memcpy per matrix
      const auto* p = static_cast<const Acc*>(x.dataPtr());
      const size_t bytes = static_cast<size_t>(block) * sizeof(Acc);
      for (int64_t i = 0; i < count; ++i) {
        if (i + kPrefetchAhead < count)
          prefetchMatrix<0>(p + ns[i + kPrefetchAhead] * x.stride(0), bytes);
        std::memcpy(d + i * block, p + ns[i] * x.stride(0), bytes);
      }
      return;
    }
  }
  const void* p = x.dataPtr();
  if (denseInner(x)) {  // converting (float16/bfloat16): one tight loop per matrix
    for (int64_t i = 0; i < count; ++i) {
      const int64_t base = ns[i] * x.stride(0);
      for (int64_t e = 0; e < block; ++e) *d++ = static_cast<Acc>(T::load(p, base + e));
    }
    return;
  }
  for (int64_t i = 0; i < count; ++i) {
    const int64_t base = ns[i] * x.stride(0);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < cols; ++k)
        *d++ = static_cast<Acc>(T::load(p, base + r * x.stride(1) + k * x.stride(2)));
  }
}

/// Writes float matrices of `block` elements from dense `src` to rows ns[i] of `dst` with
/// non-temporal stores, when every row starts on a 16-byte boundary and is whole 64-byte lines:
/// the output is written once and read by no one soon, so the stores skip reading each line in
/// first (a memcpy reads each line it is about to overwrite: 32 MiB more traffic at the seed's
/// shape). With the prefetching above, fused / one sgemm went from 1.34-1.40 to 1.25-1.31
/// (bench_strategies, four runs each, tests/bench/README.md).
/// Returns false, having written nothing, where that does not apply.
template <typename Acc>
bool streamRows(Acc* dst, int64_t block, const int64_t* ns, int64_t count, const Acc* src) {
#if defined(__SSE2__)
  if constexpr (std::is_same_v<Acc, float>) {
    const size_t bytes = static_cast<size_t>(block) * sizeof(float);
    if (bytes % 64 != 0 || reinterpret_cast<std::uintptr_t>(dst) % 16 != 0) return false;
    for (int64_t i = 0; i < count; ++i) {
      float* d = dst + ns[i] * block;
      const float* s = src + i * block;
      for (int64_t e = 0; e < block; e += 4) _mm_stream_ps(d + e, _mm_loadu_ps(s + e));
    }
    _mm_sfence();  // the stores are visible before the threads join
    return true;
  }
#endif
  (void)dst, (void)block, (void)ns, (void)count, (void)src;
  return false;
}

/// Writes dense `src` ([ns * rows, cols]) back to the contiguous [N, rows, cols] tensor y.
template <typename T, typename Acc>
void unpack(const Tensor& y, const int64_t* ns, int64_t count, const std::vector<Acc>& src) {
  const int64_t block = y.size(1) * y.size(2);
  if (block == 0) return;
  if constexpr (std::is_same_v<typename T::Stored, Acc>) {
    auto* p = static_cast<Acc*>(y.dataPtr());
    const size_t bytes = static_cast<size_t>(block) * sizeof(Acc);
    if (streamRows(p, block, ns, count, src.data())) return;
    for (int64_t i = 0; i < count; ++i) {
      if (i + kPrefetchAhead < count) prefetchMatrix<1>(p + ns[i + kPrefetchAhead] * block, bytes);
      std::memcpy(p + ns[i] * block, src.data() + i * block, bytes);
    }
  } else {
    void* p = y.dataPtr();
    for (int64_t i = 0; i < count; ++i)
      for (int64_t k = 0; k < block; ++k) T::store(p, ns[i] * block + k, src[i * block + k]);
  }
}

/// The matrix c[m] ([rows, cols]) as BLAS reads it: in place when it is dense and of the
/// accumulation type, else packed into `scratch`. Returns the pointer; `ld` gets its stride.
template <typename T, typename Acc>
const Acc* matrixOf(const Tensor& c, int64_t m, std::vector<Acc>& scratch, int64_t& ld) {
  if constexpr (std::is_same_v<typename T::Stored, Acc>) {
    const int64_t cols = std::max<int64_t>(1, c.size(2));
    if (c.size(2) <= 1 || c.stride(2) == 1) {
      ld = c.size(1) <= 1 ? cols : c.stride(1);
      if (c.size(1) <= 1 || c.stride(1) >= cols)
        return static_cast<const Acc*>(c.dataPtr()) + m * c.stride(0);
    }
  }
  ld = std::max<int64_t>(1, c.size(2));
  pack<T, Acc>(c, &m, 1, scratch);
  return scratch.data();
}

/// Runs fn(T tag, Acc zero) with the element traits of `dtype`: float64 accumulates in double.
template <typename F>
void dispatchAcc(DType dtype, F&& fn) {
  detail::dispatchFloating(dtype, [&](auto tag) {
    using T = decltype(tag);
    fn(tag, typename T::Acc{});
  });
}

/// Host threads for a product of `fmas` multiply-adds over `groups` groups: the hardware's
/// concurrency when there is enough work to share (a few milliseconds), else 1.
unsigned forwardThreads(int64_t fmas, int64_t groups) {
  constexpr int64_t kMinFmasPerThread = int64_t{1} << 23;  // ~8 M FMAs: a few ms on one core
  const int64_t byWork = std::max<int64_t>(1, fmas / kMinFmasPerThread);
  const int64_t hw = std::max(1u, std::thread::hardware_concurrency());
  return static_cast<unsigned>(std::min({hw, byWork, std::max<int64_t>(1, groups)}));
}

void forward(const Tensor& out, const Tensor& a, const Tensor& c, const Groups& g) {
  const int64_t I = a.size(1), J = a.size(2), K = c.size(2);
  const int64_t M = c.size(0);
  const int64_t N = a.size(0);
  dispatchAcc(a.dtype(), [&](auto tag, auto zero) {
    using T = decltype(tag);
    using Acc = decltype(zero);
    const unsigned threads = forwardThreads(N * I * J * K, M);
    // OpenBLAS (0.3.21, interface/gemm.c) runs a GEMM of m n k <= 4 * 65536 on one thread.
    const int64_t maxRows =
        threads > 1 ? std::max<int64_t>(1, (int64_t{4} * 65536) / std::max<int64_t>(1, J * K))
                    : std::numeric_limits<int64_t>::max();
    // Groups [m0, m1): pack their rows of a, one GEMM with c[m] each, scatter the rows back.
    const auto run = [&](int64_t m0, int64_t m1) {
      std::vector<Acc> packedA, packedC, packedOut;
      for (int64_t m = m0; m < m1; ++m) {
        const int64_t count = g.offsets[m + 1] - g.offsets[m];
        if (count == 0) continue;
        const int64_t* ns = g.order.data() + g.offsets[m];
        pack<T, Acc>(a, ns, count, packedA);
        int64_t ldc = K;
        const Acc* cm = matrixOf<T, Acc>(c, m, packedC, ldc);
        packedOut.resize(static_cast<size_t>(count * I * K));
        // On several host threads, each GEMM is cut into slices of at most maxRows rows, small
        // enough for OpenBLAS to run on the calling thread: a threaded call from each of our
        // threads would queue on its one thread server. Rows of a GEMM are independent.
        for (int64_t r0 = 0; r0 < count * I; r0 += maxRows) {
          const int64_t rows = std::min(maxRows, count * I - r0);
          blas::gemm(false, false, rows, K, J, Acc{1}, packedA.data() + r0 * J, J, cm, ldc, Acc{0},
                     packedOut.data() + r0 * K, K);
        }
        unpack<T, Acc>(out, ns, count, packedOut);
      }
    };
    // The groups' GEMMs are small (the seed's: about 64 x 64 x 64), too small for BLAS to
    // thread, so contiguous ranges of groups with about equal rows run on the host's cores.
    // Each output row is written by exactly one group: the result does not depend on the split.
    if (threads <= 1) {
      run(0, M);
      return;
    }
    std::vector<int64_t> bounds(threads + 1, M);
    bounds[0] = 0;
    for (unsigned t = 1; t < threads; ++t) {
      const int64_t rows = N * t / threads;  // first group whose rows start at or after this
      bounds[t] =
          std::lower_bound(g.offsets.begin(), g.offsets.end() - 1, rows) - g.offsets.begin();
    }
    std::vector<std::exception_ptr> errors(threads);
    {
      std::vector<std::jthread> helpers;
      for (unsigned t = 1; t < threads; ++t) {
        helpers.emplace_back([&, t] {
          try {
            run(bounds[t], bounds[t + 1]);
          } catch (...) {
            errors[t] = std::current_exception();
          }
        });
      }
      try {
        run(bounds[0], bounds[1]);
      } catch (...) {
        errors[0] = std::current_exception();
      }
    }
    for (const std::exception_ptr& e : errors)
      if (e) std::rethrow_exception(e);
  });
}

class GatherBmmBackward final : public Node {
 public:
  GatherBmmBackward(const Tensor& a, const Tensor& c, Tensor q, bool needA, bool needC)
      : q_(std::move(q)) {
    // References only: a and c are alive anyway; nothing new is allocated.
    if (needA) c_ = SavedTensor(c, savedWhy("c", name(), a));
    if (needC) a_ = SavedTensor(a, savedWhy("a", name(), c));
    aSizes_ = a.sizes();
    cSizes_ = c.sizes();
  }
  std::string name() const override { return "GatherBmmBackward"; }
  TensorList apply(TensorList&& grads) override;
  void releaseSaved() override {
    a_.reset();
    c_.reset();
  }
  std::vector<std::pair<std::string, Tensor>> savedTensors() const override {
    return {{"a", a_.get()}, {"c", c_.get()}, {"q", q_}};
  }

 private:
  SavedTensor a_, c_;
  Tensor q_;
  Shape aSizes_, cSizes_;
};

TensorList GatherBmmBackward::apply(TensorList&& grads) {
  const Tensor& dO = grads[0];
  TensorList result(2);
  if (!dO.defined()) return result;
  OpScope op(dO.device(), "gather_bmm_backward");
  // One bmm-sized product per gradient (dA = dO @ c[q]^T, dC = scatter of a^T @ dO).
  const int64_t products = (needsInputGrad(0) ? 1 : 0) + (needsInputGrad(1) ? 1 : 0);
  countFlops("matmulviz.gather_bmm_backward",
             products * bmmFlops(aSizes_[0], aSizes_[1], aSizes_[2], cSizes_[2]));
  const DevicePtr& device = dO.storage().devicePtr();
  const Tensor qOnDevice = q_.deviceKind() == DeviceKind::Host && device
                               ? toDevice(q_, device, "q copied to the device")
                               : q_;
  Tensor dA, dC;
  if (needsInputGrad(0)) dA = empty(aSizes_, dO.dtype(), device, "grad of a");
  if (needsInputGrad(1)) dC = zeros(cSizes_, dO.dtype(), device, "grad of c");
  if (ComputeBackend* be = dO.compute(); be && dO.numel() > 0) {
    if (dA.defined()) be->gatherBmmGradA(dA, dO, c_.get(), qOnDevice);
    if (dC.defined()) be->gatherBmmGradC(dC, a_.get(), dO, qOnDevice);
  } else if (dO.hasData()) {
    const Groups g = groupByIndex(q_, cSizes_[0]);
    const int64_t I = aSizes_[1], J = aSizes_[2], K = cSizes_[2];
    dispatchAcc(dO.dtype(), [&](auto tag, auto zero) {
      using T = decltype(tag);
      using Acc = decltype(zero);
      std::vector<Acc> packedDO, packedX, packedResult;
      for (int64_t m = 0; m < cSizes_[0]; ++m) {
        const int64_t count = g.offsets[m + 1] - g.offsets[m];
        if (count == 0) continue;
        const int64_t* ns = g.order.data() + g.offsets[m];
        pack<T, Acc>(dO, ns, count, packedDO);  // [count*I, K]
        if (dA.defined()) {                     // dA[n] = dO[n] @ c[m]^T
          int64_t ldc = K;
          const Acc* cm = matrixOf<T, Acc>(c_.get(), m, packedX, ldc);  // [J, K]
          packedResult.resize(static_cast<size_t>(count * I * J));
          blas::gemm(false, true, count * I, J, K, Acc{1}, packedDO.data(), K, cm, ldc, Acc{0},
                     packedResult.data(), J);
          unpack<T, Acc>(dA, ns, count, packedResult);
        }
        if (dC.defined()) {  // dC[m] = sum_n a[n]^T @ dO[n] = A_m^T [J, count*I] @ dO_m
          pack<T, Acc>(a_.get(), ns, count, packedX);  // [count*I, J]
          packedResult.resize(static_cast<size_t>(J * K));
          blas::gemm(true, false, J, K, count * I, Acc{1}, packedX.data(), J, packedDO.data(), K,
                     Acc{0}, packedResult.data(), K);
          const int64_t mm = m;
          unpack<T, Acc>(dC, &mm, 1, packedResult);
        }
      }
    });
  }
  result[0] = dA;
  result[1] = dC;
  return result;
}

}  // namespace

Tensor gatherBmm(const Tensor& a, const Tensor& c, const Tensor& q) {
  if (a.dim() != 3)
    throw std::invalid_argument("gather_bmm: a must be [N, I, J], got " + a.shapeString());
  if (c.dim() != 3)
    throw std::invalid_argument("gather_bmm: c must be [M, J, K], got " + c.shapeString());
  if (q.dim() != 1 || q.dtype() != DType::Int64)
    throw std::invalid_argument("gather_bmm: q must be a 1-d int64 tensor");
  if (q.size(0) != a.size(0))
    throw std::invalid_argument("gather_bmm: q has " + std::to_string(q.size(0)) +
                                " entries but a has N = " + std::to_string(a.size(0)));
  if (a.size(2) != c.size(1))
    throw std::invalid_argument("gather_bmm: a's J (" + std::to_string(a.size(2)) +
                                ") differs from c's J (" + std::to_string(c.size(1)) + ")");
  if (a.dtype() != c.dtype()) throw std::invalid_argument("gather_bmm: a and c dtypes differ");
  const int64_t M = c.size(0);
  if (q.hasData()) {
    const Tensor qh = hostReadable(q, "q on the host");
    const Tensor qc = qh.isContiguous() ? qh : clone(qh, MemoryFormat::Contiguous);
    for (int64_t n = 0; n < qc.numel(); ++n) {
      const int64_t v = qc.data<int64_t>()[n];
      if (v < 0 || v >= M)
        throw std::out_of_range("q[" + std::to_string(n) + "] = " + std::to_string(v) +
                                " is out of bounds for c's dimension 0 with size " +
                                std::to_string(M));
    }
  }
  OpScope op(a.device(), "gather_bmm");
  countFlops("matmulviz.gather_bmm", bmmFlops(a.size(0), a.size(1), a.size(2), c.size(2)));
  const DevicePtr& device = a.storage().devicePtr();
  Tensor out = empty({a.size(0), a.size(1), c.size(2)}, a.dtype(), device, "gather_bmm output");
  {
    const Tensor qOnDevice = q.deviceKind() == DeviceKind::Host && device
                                 ? toDevice(q, device, "q copied to the device")
                                 : q;
    // Kernel 08's buckets, on every device alike (grouped_bmm_rule.h), so that a cpu or meta run
    // reports the memory a GPU run uses; the host path groups with its own counting sort.
    Tensor buckets;
    if (device && groupedBmmApplies(a, c, q)) {
      buckets = empty({GroupedBmmWorkspace::int64Elements(a.size(0), M)}, DType::Int64, device,
                      "grouped_bmm buckets");
    }
    if (ComputeBackend* be = out.compute(); be && out.numel() > 0) {
      if (buckets.defined()) {
        be->gatherBmmGrouped(out, a, c, qOnDevice, buckets);
      } else {
        be->gatherBmm(out, a, c, qOnDevice);
      }
    } else if (out.hasData() && a.hasData() && q.hasData()) {
      forward(out, a, c, groupByIndex(q, M));
    }
  }
  if (anyRequiresGrad({&a, &c})) {
    auto node = std::make_shared<GatherBmmBackward>(a, c, q, a.requiresGrad(), c.requiresGrad());
    node->nextEdges = {gradientEdge(a), gradientEdge(c)};
    setHistory(out, node);
  }
  return out;
}

}  // namespace matmulviz
