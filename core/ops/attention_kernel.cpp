// The host computation of scaled dot product attention (attention_kernel.h), in float64: the
// scores of one query row are recomputed whenever needed (forward, then backward from the
// logsumexp), as the fused CUDA kernels recompute their tiles.
#include "core/ops/attention_kernel.h"

#include "core/ops/strided_loop.h"

#include <cmath>
#include <limits>
#include <vector>

namespace matmulviz::detail {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

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

/// row[j] = scale * q_i . k_j + bias[b, h, i, j], -inf where masked (causal: j > i).
template <typename T>
void scoreRow(const AttentionProblem& p, const Slices& x, int64_t b, int64_t h, int64_t i,
              std::vector<double>& row) {
  row.resize(static_cast<size_t>(x.s));
  const double* qi = x.q.data() + i * x.e;
  const void* pb = p.bias.defined() ? p.bias.dataPtr() : nullptr;
  const int64_t biasBase =
      pb ? b * p.bias.stride(0) + h * p.bias.stride(1) + i * p.bias.stride(2) : 0;
  for (int64_t j = 0; j < x.s; ++j) {
    if (p.causal && j > i) {
      row[j] = -kInf;
      continue;
    }
    const double* kj = x.k.data() + j * x.e;
    double dot = 0;
    for (int64_t d = 0; d < x.e; ++d) dot += qi[d] * kj[d];
    row[j] = dot * p.scale;
    if (pb) row[j] += static_cast<double>(T::load(pb, biasBase + j * p.bias.stride(3)));
  }
}

/// log(sum(exp(row))), +inf when every entry is -inf (a row with nothing to attend to).
double logSumExp(const std::vector<double>& row) {
  double m = -kInf;
  for (double s : row) m = std::max(m, s);
  if (m == -kInf) return kInf;
  double sum = 0;
  for (double s : row) sum += std::exp(s - m);
  return m + std::log(sum);
}

float& lseAt(const Tensor& lse, int64_t b, int64_t h, int64_t i) {
  return lse.data<float>()[b * lse.stride(0) + h * lse.stride(1) + i * lse.stride(2)];
}

template <typename T>
void forwardHead(const AttentionProblem& p, const Tensor& out, const Tensor& lse, int64_t b,
                 int64_t h, Slices& x, std::vector<double>& row) {
  loadQkv<T>(p, b, h, x);
  std::vector<double> o(static_cast<size_t>(x.l * x.ev), 0.0);
  for (int64_t i = 0; i < x.l; ++i) {
    scoreRow<T>(p, x, b, h, i, row);
    const double logSum = logSumExp(row);
    if (lse.defined()) lseAt(lse, b, h, i) = static_cast<float>(logSum);
    if (logSum == kInf) continue;  // all masked: the output row stays 0 (_safe_softmax)
    double* oi = o.data() + i * x.ev;
    for (int64_t j = 0; j < x.s; ++j) {
      const double pij = std::exp(row[j] - logSum);
      if (pij == 0) continue;
      const double* vj = x.v.data() + j * x.ev;
      for (int64_t d = 0; d < x.ev; ++d) oi[d] += pij * vj[d];
    }
  }
  storeSlice<T>(out, b, h, o);
}

/// The gradients of one (batch, head), accumulated in float64.
struct HeadGrads {
  std::vector<double> dq, dk, dv, dOut, out;
};

template <typename T>
void backwardRow(const AttentionProblem& p, const Slices& x, HeadGrads& g, double lseI,
                 double deltaI, int64_t i, const std::vector<double>& row) {
  const double* dOi = g.dOut.data() + i * x.ev;
  const double* qi = x.q.data() + i * x.e;
  double* dqi = g.dq.data() + i * x.e;
  for (int64_t j = 0; j < x.s; ++j) {
    const double pij = std::exp(row[j] - lseI);  // 0 where masked (or lse +inf)
    if (pij == 0) continue;
    const double* vj = x.v.data() + j * x.ev;
    double* dvj = g.dv.data() + j * x.ev;
    double dp = 0;
    for (int64_t d = 0; d < x.ev; ++d) {
      dvj[d] += pij * dOi[d];
      dp += dOi[d] * vj[d];
    }
    const double ds = pij * (dp - deltaI) * p.scale;
    const double* kj = x.k.data() + j * x.e;
    double* dkj = g.dk.data() + j * x.e;
    for (int64_t d = 0; d < x.e; ++d) {
      dqi[d] += ds * kj[d];
      dkj[d] += ds * qi[d];
    }
  }
}

template <typename T>
void backwardHead(const AttentionProblem& p, const Tensor& out, const Tensor& lse,
                  const Tensor& dOut, const Tensor& delta, int64_t b, int64_t h, Slices& x,
                  HeadGrads& g, std::vector<double>& row) {
  loadQkv<T>(p, b, h, x);
  loadSlice<T>(dOut, b, h, g.dOut);
  loadSlice<T>(out, b, h, g.out);
  g.dq.assign(static_cast<size_t>(x.l * x.e), 0.0);
  g.dk.assign(static_cast<size_t>(x.s * x.e), 0.0);
  g.dv.assign(static_cast<size_t>(x.s * x.ev), 0.0);
  for (int64_t i = 0; i < x.l; ++i) {
    double dot = 0;
    for (int64_t d = 0; d < x.ev; ++d) dot += g.dOut[i * x.ev + d] * g.out[i * x.ev + d];
    float& di = lseAt(delta, b, h, i);
    di = static_cast<float>(dot);  // the kernel keeps delta in float32
    scoreRow<T>(p, x, b, h, i, row);
    backwardRow<T>(p, x, g, static_cast<double>(lseAt(lse, b, h, i)), static_cast<double>(di), i,
                   row);
  }
}

}  // namespace

void attentionForwardHost(const AttentionProblem& p, const Tensor& out, const Tensor& lse) {
  dispatchFloating(p.q.dtype(), [&](auto tag) {
    using T = decltype(tag);
    Slices x;
    std::vector<double> row;
    for (int64_t b = 0; b < p.q.size(0); ++b)
      for (int64_t h = 0; h < p.q.size(1); ++h) forwardHead<T>(p, out, lse, b, h, x, row);
  });
}

void attentionBackwardHost(const AttentionProblem& p, const Tensor& out, const Tensor& lse,
                           const Tensor& dOut, const Tensor& delta, const Tensor& dq,
                           const Tensor& dk, const Tensor& dv) {
  dispatchFloating(p.q.dtype(), [&](auto tag) {
    using T = decltype(tag);
    Slices x;
    HeadGrads g;
    std::vector<double> row;
    for (int64_t b = 0; b < p.q.size(0); ++b)
      for (int64_t h = 0; h < p.q.size(1); ++h) {
        backwardHead<T>(p, out, lse, dOut, delta, b, h, x, g, row);
        storeSlice<T>(dq, b, h, g.dq);
        storeSlice<T>(dk, b, h, g.dk);
        storeSlice<T>(dv, b, h, g.dv);
      }
  });
}

}  // namespace matmulviz::detail
