#pragma once
// The arithmetic of a device whose memory the host does not touch: a CUDA GPU
// (kernels/cuda/cuda_compute_backend.h) or the simulator running the same kernel bodies
// (kernels/engine/simulated_backend.h). The engine's ops (core/ops) call these primitives for
// tensors on such a device, and do the arithmetic themselves on the host otherwise (cpu device).
// Memory stays the allocator model's: a backend allocates nothing through it and nothing the
// model would not see, so curMem/maxMem on a GPU are the same numbers as on the cpu device.
//
// Every tensor argument lives on the backend's device unless said otherwise. Shapes are
// checked by the op before the call; sizes, strides and offsets are in elements. A backend
// throws std::invalid_argument for a dtype it does not support (naming it) and its own error
// type (kernels::cuda::CudaError) when the device fails.

#include <cstdint>
#include <string>
#include <vector>

namespace matmulviz {

class Tensor;
using Shape = std::vector<int64_t>;

class ComputeBackend {
 public:
  virtual ~ComputeBackend() = default;
  /// "cuda", "simulated cuda": what reports print.
  virtual std::string name() const = 0;

  /// dst[...] = src[...], same shape, any strides, dtype converted. One side may be a host
  /// tensor (a transfer, cudaMemcpy); a strided side on the device is packed on the device.
  virtual void copy(const Tensor& dst, const Tensor& src) = 0;
  /// Every byte of t's elements set to 0 (t contiguous).
  virtual void fillZero(const Tensor& t) = 0;
  /// a += b, same shape, same dtype.
  virtual void addInPlace(const Tensor& a, const Tensor& b) = 0;
  /// a *= b, same shape (b may be an expanded view), same dtype.
  virtual void mulInPlace(const Tensor& a, const Tensor& b) = 0;
  /// out (contiguous, any values) = the sum of t over the elements that map to each of out's
  /// elements, where `outStrides` (t.dim() entries) are out's strides seen from t's index
  /// space, 0 on the summed dims (at::sum_to, sum). Accumulates in double, rounds once.
  virtual void sumInto(const Tensor& out, const Shape& outStrides, const Tensor& t) = 0;
  /// out[b] = a[b] @ b_[b]: a [B, n, m], b_ [B, m, p] with any strides (a batch stride of 0
  /// broadcasts), out [B, n, p] contiguous. float32 and float64.
  virtual void gemm(const Tensor& out, const Tensor& a, const Tensor& b) = 0;
  /// out[i, ...] = t[index[i], ...]: index a contiguous int64 tensor on the device whose values
  /// are in [-rows, rows) (negative counts from the end), out contiguous
  /// [index.numel(), t.sizes[1:]...].
  virtual void indexRows(const Tensor& out, const Tensor& t, const Tensor& index) = 0;
  /// out[index[i], ...] += g[i, ...] (index_put_ with accumulate): out contiguous, g of shape
  /// [index.numel(), out.sizes[1:]...], index as in indexRows.
  virtual void indexAddRows(const Tensor& out, const Tensor& index, const Tensor& g) = 0;
  /// out[n] = a[n] @ c[q[n]]: a [N, I, J], c [M, J, K], q [N] int64 on the device with values
  /// in [0, M) (any stride), out [N, I, K] contiguous (the forum post's fused strategy, no copy of
  /// c[q]).
  virtual void gatherBmm(const Tensor& out, const Tensor& a, const Tensor& c, const Tensor& q) = 0;
  /// gatherBmm as kernel 08 computes it (kernels/08_grouped_bmm.h), for operands that
  /// groupedBmmApplies (core/ops/grouped_bmm_rule.h) accepts: q's items bucketed into `buckets`
  /// (contiguous, GroupedBmmWorkspace's int64Elements; overwritten), then one block per matrix
  /// of c multiplies the rows routed to it.
  virtual void gatherBmmGrouped(const Tensor& out, const Tensor& a, const Tensor& c,
                                const Tensor& q, const Tensor& buckets) = 0;
  /// dA[n] = dO[n] @ c[q[n]]^T, dA [N, I, J] contiguous.
  virtual void gatherBmmGradA(const Tensor& dA, const Tensor& dO, const Tensor& c,
                              const Tensor& q) = 0;
  /// dC[q[n]] += a[n]^T @ dO[n], dC [M, J, K] contiguous and zeroed by the caller.
  virtual void gatherBmmGradC(const Tensor& dC, const Tensor& a, const Tensor& dO,
                              const Tensor& q) = 0;
  /// Waits until every queued operation has finished (cudaDeviceSynchronize), so that host
  /// timers measure the work. Rethrows a failure of that work.
  virtual void synchronize() = 0;
};

}  // namespace matmulviz
