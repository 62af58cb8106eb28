// The host computation of scaled dot product attention (attention_kernel.h), in float64 with
// BLAS, a block of query rows at a time: the scores of a block ([rows, S], a host work buffer,
// never device memory) are recomputed whenever needed (forward, then backward from the
// logsumexp), as the fused CUDA kernels recompute their tiles.
#include "core/ops/attention_kernel.h"

#include "core/ops/strided_loop.h"
#include "core/util/blas.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace matmulviz::detail {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
/// Query rows per block: bounds the host work buffers to kBlockRows x S doubles.
constexpr int64_t kBlockRows = 64;

/// x[b, h] (a [rows, cols] matrix read through x's strides) as dense float64 rows.
template <typename T>
void loadSlice(const Tensor& x, int64_t b, int64_t h, std::vector<double>& dst) {
  const int64_t rows = x.size(2), cols = x.size(3);
  dst.resize(static_cast<size_t>(rows * cols));
  const void* p = x.dataPtr();
  const int64_t base = b * x.stride(0) + h * x.stride(1);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      dst[r * cols + c] = static_cast<double>(T::load(p, base + r * x.stride(2) + c * x.stride(3)));
}

/// Writes dense float64 rows into x[b, h], rounding once to x's dtype.
template <typename T>
void storeSlice(const Tensor& x, int64_t b, int64_t h, const std::vector<double>& src) {
  const int64_t rows = x.size(2), cols = x.size(3);
  void* p = x.dataPtr();
  const int64_t base = b * x.stride(0) + h * x.stride(1);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      T::store(p, base + r * x.stride(2) + c * x.stride(3),
               static_cast<typename T::Acc>(src[r * cols + c]));
}

/// The dense q, k, v of one (batch, head) and the problem's sizes.
struct Slices {
  std::vector<double> q, k, v;
  int64_t l = 0, s = 0, e = 0, ev = 0;
};

template <typename T>
void loadQkv(const AttentionProblem& p, int64_t b, int64_t h, Slices& out) {
  loadSlice<T>(p.q, b, h, out.q);
  loadSlice<T>(p.k, b, h, out.k);
  loadSlice<T>(p.v, b, h, out.v);
  out.l = p.q.size(2);
  out.s = p.k.size(2);
  out.e = p.q.size(3);
  out.ev = p.v.size(3);
}

/// scores[r, j] = scale * q_{i0+r} . k_j + bias[b, h, i0+r, j] for a block of query rows,
/// -inf where masked (causal: j > i).
template <typename T>
void scoreBlock(const AttentionProblem& p, const Slices& x, int64_t b, int64_t h, int64_t i0,
                int64_t rows, std::vector<double>& scores) {
  scores.resize(static_cast<size_t>(rows * x.s));
  blas::gemm(false, true, rows, x.s, x.e, p.scale, x.q.data() + i0 * x.e, x.e, x.k.data(), x.e, 0.0,
             scores.data(), std::max<int64_t>(x.s, 1));
  const void* pb = p.bias.defined() ? p.bias.dataPtr() : nullptr;
  for (int64_t r = 0; r < rows; ++r) {
    double* row = scores.data() + r * x.s;
    const int64_t i = i0 + r;
    if (pb) {
      const int64_t base = b * p.bias.stride(0) + h * p.bias.stride(1) + i * p.bias.stride(2);
      for (int64_t j = 0; j < x.s; ++j)
        row[j] += static_cast<double>(T::load(pb, base + j * p.bias.stride(3)));
    }
    if (p.causal)
      for (int64_t j = i + 1; j < x.s; ++j) row[j] = -kInf;
  }
}

/// log(sum(exp(row))), +inf when every entry is -inf (a row with nothing to attend to).
double logSumExp(const double* row, int64_t n) {
  double m = -kInf;
  for (int64_t j = 0; j < n; ++j) m = std::max(m, row[j]);
  if (m == -kInf) return kInf;
  double sum = 0;
  for (int64_t j = 0; j < n; ++j) sum += std::exp(row[j] - m);
  return m + std::log(sum);
}

float& lseAt(const Tensor& lse, int64_t b, int64_t h, int64_t i) {
  return lse.data<float>()[b * lse.stride(0) + h * lse.stride(1) + i * lse.stride(2)];
}

/// out[b, h] = softmax(scores) @ v, a block of rows at a time; the logsumexp of each row kept.
template <typename T>
void forwardHead(const AttentionProblem& p, const Tensor& out, const Tensor& lse, int64_t b,
                 int64_t h, Slices& x, std::vector<double>& scores) {
  loadQkv<T>(p, b, h, x);
  std::vector<double> o(static_cast<size_t>(x.l * x.ev), 0.0);
  for (int64_t i0 = 0; i0 < x.l; i0 += kBlockRows) {
    const int64_t rows = std::min(kBlockRows, x.l - i0);
    scoreBlock<T>(p, x, b, h, i0, rows, scores);
    for (int64_t r = 0; r < rows; ++r) {
      double* row = scores.data() + r * x.s;
      const double logSum = logSumExp(row, x.s);
      if (lse.defined()) lseAt(lse, b, h, i0 + r) = static_cast<float>(logSum);
      for (int64_t j = 0; j < x.s; ++j) row[j] = std::exp(row[j] - logSum);  // 0 if all masked
    }
    blas::gemm(false, false, rows, x.ev, x.s, 1.0, scores.data(), std::max<int64_t>(x.s, 1),
               x.v.data(), x.ev, 0.0, o.data() + i0 * x.ev, x.ev);
  }
  storeSlice<T>(out, b, h, o);
}

/// The gradients of one (batch, head), accumulated in float64, and the block work buffers.
struct HeadGrads {
  std::vector<double> dq, dk, dv, dOut, out, delta, dp;
};

/// One block of query rows: P recomputed from the scores and the logsumexp, then
/// dV += P^T dO, dP = dO V^T, dS = P * (dP - delta) * scale, dQ = dS K, dK += dS^T Q.
void backwardBlock(const AttentionProblem& p, const Slices& x, HeadGrads& g, const float* lse,
                   int64_t lseStride, int64_t i0, int64_t rows, std::vector<double>& scores) {
  const int64_t ld = std::max<int64_t>(x.s, 1);
  for (int64_t r = 0; r < rows; ++r) {
    const double l = static_cast<double>(lse[(i0 + r) * lseStride]);
    double* row = scores.data() + r * x.s;
    for (int64_t j = 0; j < x.s; ++j) row[j] = std::exp(row[j] - l);  // 0 where masked
  }
  const double* dO = g.dOut.data() + i0 * x.ev;
  blas::gemm(true, false, x.s, x.ev, rows, 1.0, scores.data(), ld, dO, x.ev, 1.0, g.dv.data(),
             x.ev);
  g.dp.resize(static_cast<size_t>(rows * x.s));
  blas::gemm(false, true, rows, x.s, x.ev, 1.0, dO, x.ev, x.v.data(), x.ev, 0.0, g.dp.data(), ld);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < x.s; ++j) {
      const int64_t at = r * x.s + j;
      g.dp[at] = scores[at] == 0 ? 0.0 : scores[at] * (g.dp[at] - g.delta[i0 + r]) * p.scale;
    }
  blas::gemm(false, false, rows, x.e, x.s, 1.0, g.dp.data(), ld, x.k.data(), x.e, 0.0,
             g.dq.data() + i0 * x.e, x.e);
  blas::gemm(true, false, x.s, x.e, rows, 1.0, g.dp.data(), ld, x.q.data() + i0 * x.e, x.e, 1.0,
             g.dk.data(), x.e);
}

template <typename T>
void backwardHead(const AttentionProblem& p, const Tensor& out, const Tensor& lse,
                  const Tensor& dOut, const Tensor& delta, int64_t b, int64_t h, Slices& x,
                  HeadGrads& g, std::vector<double>& scores) {
  loadQkv<T>(p, b, h, x);
  loadSlice<T>(dOut, b, h, g.dOut);
  loadSlice<T>(out, b, h, g.out);
  g.dq.assign(static_cast<size_t>(x.l * x.e), 0.0);
  g.dk.assign(static_cast<size_t>(x.s * x.e), 0.0);
  g.dv.assign(static_cast<size_t>(x.s * x.ev), 0.0);
  g.delta.resize(static_cast<size_t>(x.l));
  for (int64_t i = 0; i < x.l; ++i) {
    double dot = 0;
    for (int64_t d = 0; d < x.ev; ++d) dot += g.dOut[i * x.ev + d] * g.out[i * x.ev + d];
    float& di = lseAt(delta, b, h, i);
    di = static_cast<float>(dot);  // the kernel keeps delta in float32
    g.delta[i] = static_cast<double>(di);
  }
  const float* lseRow = &lseAt(lse, b, h, 0);
  for (int64_t i0 = 0; i0 < x.l; i0 += kBlockRows) {
    const int64_t rows = std::min(kBlockRows, x.l - i0);
    scoreBlock<T>(p, x, b, h, i0, rows, scores);
    backwardBlock(p, x, g, lseRow, lse.stride(2), i0, rows, scores);
  }
}

}  // namespace

void attentionForwardHost(const AttentionProblem& p, const Tensor& out, const Tensor& lse) {
  dispatchFloating(p.q.dtype(), [&](auto tag) {
    using T = decltype(tag);
    Slices x;
    std::vector<double> scores;
    for (int64_t b = 0; b < p.q.size(0); ++b)
      for (int64_t h = 0; h < p.q.size(1); ++h) forwardHead<T>(p, out, lse, b, h, x, scores);
  });
}

void attentionBackwardHost(const AttentionProblem& p, const Tensor& out, const Tensor& lse,
                           const Tensor& dOut, const Tensor& delta, const Tensor& dq,
                           const Tensor& dk, const Tensor& dv) {
  dispatchFloating(p.q.dtype(), [&](auto tag) {
    using T = decltype(tag);
    Slices x;
    HeadGrads g;
    std::vector<double> scores;
    for (int64_t b = 0; b < p.q.size(0); ++b)
      for (int64_t h = 0; h < p.q.size(1); ++h) {
        backwardHead<T>(p, out, lse, dOut, delta, b, h, x, g, scores);
        storeSlice<T>(dq, b, h, g.dq);
        storeSlice<T>(dk, b, h, g.dk);
        storeSlice<T>(dv, b, h, g.dv);
      }
  });
}

}  // namespace matmulviz::detail
