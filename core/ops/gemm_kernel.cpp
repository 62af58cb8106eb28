#include "core/ops/gemm_kernel.h"

#include "core/ops/strided_loop.h"
#include "core/util/blas.h"

#include <algorithm>
#include <vector>

namespace matmulviz::detail {

namespace {

struct MatLayout {
  bool trans = false;  // column-major: BLAS sees the transpose
  int64_t ld = 1;
};

MatLayout layoutOf(int64_t rows, int64_t cols, int64_t rowStride, int64_t colStride) {
  if ((colStride == 1 || cols == 1) && (rows == 1 || rowStride >= std::max<int64_t>(1, cols)))
    return {false, rows == 1 ? std::max<int64_t>(1, cols) : rowStride};
  return {true, cols == 1 ? std::max<int64_t>(1, rows) : colStride};
}

/// Copies matrix `batch` of a [B, r, c] half/bfloat16 tensor into a dense float buffer.
template <typename T>
void toFloat(const Tensor& t, int64_t batch, std::vector<float>& dst) {
  const int64_t r = t.size(1), c = t.size(2);
  dst.resize(static_cast<size_t>(r * c));
  const void* p = t.dataPtr();
  const int64_t base = batch * t.stride(0);
  float* d = dst.data();
  if (c == 1 || t.stride(2) == 1) {  // dense rows: one tight loop per row
    const auto* src = static_cast<const typename T::Stored*>(p);
    for (int64_t i = 0; i < r; ++i) {
      const auto* row = src + base + i * t.stride(1);
      for (int64_t j = 0; j < c; ++j) d[i * c + j] = T::load(row, j);
    }
    return;
  }
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j)
      d[i * c + j] = T::load(p, base + i * t.stride(1) + j * t.stride(2));
}

}  // namespace

bool blasCompatible(int64_t rows, int64_t cols, int64_t rowStride, int64_t colStride) {
  const bool rowMajor =
      (colStride == 1 || cols == 1) && (rows == 1 || rowStride >= std::max<int64_t>(1, cols));
  const bool colMajor =
      (rowStride == 1 || rows == 1) && (cols == 1 || colStride >= std::max<int64_t>(1, rows));
  return rowMajor || colMajor;
}

void batchedGemm(const Tensor& out, const Tensor& a, const Tensor& b) {
  if (!out.hasData() || !a.hasData() || !b.hasData()) return;
  const int64_t B = a.size(0), n = a.size(1), m = a.size(2), p = b.size(2);
  if (B == 0 || n == 0 || p == 0) return;
  if (ComputeBackend* be = out.compute()) {
    if (m == 0)
      be->fillZero(out);
    else
      be->gemm(out, a, b);
    return;
  }
  if (m == 0) {
    std::fill_n(static_cast<char*>(out.dataPtr()), out.nbytes(), 0);
    return;
  }
  const MatLayout la = layoutOf(n, m, a.stride(1), a.stride(2));
  const MatLayout lb = layoutOf(m, p, b.stride(1), b.stride(2));
  switch (a.dtype()) {
    case DType::Float32: {
      const auto* pa = a.data<float>();
      const auto* pb = b.data<float>();
      auto* po = out.data<float>();
      for (int64_t i = 0; i < B; ++i)
        blas::gemm(la.trans, lb.trans, n, p, m, 1.0f, pa + i * a.stride(0), la.ld,
                   pb + i * b.stride(0), lb.ld, 0.0f, po + i * n * p, p);
      return;
    }
    case DType::Float64: {
      const auto* pa = a.data<double>();
      const auto* pb = b.data<double>();
      auto* po = out.data<double>();
      for (int64_t i = 0; i < B; ++i)
        blas::gemm(la.trans, lb.trans, n, p, m, 1.0, pa + i * a.stride(0), la.ld,
                   pb + i * b.stride(0), lb.ld, 0.0, po + i * n * p, p);
      return;
    }
    case DType::Float16:
    case DType::BFloat16: {
      std::vector<float> fa, fb, fo(static_cast<size_t>(n * p));
      dispatchFloating(a.dtype(), [&](auto tag) {
        using T = decltype(tag);
        for (int64_t i = 0; i < B; ++i) {
          toFloat<T>(a, i, fa);
          toFloat<T>(b, i, fb);
          blas::gemm(false, false, n, p, m, 1.0f, fa.data(), m, fb.data(), p, 0.0f, fo.data(), p);
          for (int64_t k = 0; k < n * p; ++k) T::store(out.dataPtr(), i * n * p + k, fo[k]);
        }
      });
      return;
    }
    case DType::Int64:
    case DType::Bool:
      break;
  }
  throw std::invalid_argument("matmul needs floating point tensors, got " +
                              std::string(dtypeName(a.dtype())));
}

}  // namespace matmulviz::detail
