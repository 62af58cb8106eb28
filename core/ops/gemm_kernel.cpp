#include "core/ops/gemm_kernel.h"

#include "core/memory/cublas_workspace.h"

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

/// A [B, rows, cols] operand (B = 1 for a 2-d one): sizes and strides read once.
struct MatView {
  int64_t batch = 1, rows = 0, cols = 0;
  int64_t batchStride = 0, rowStride = 0, colStride = 0;
};

MatView matView(const Tensor& t) {
  const Shape& sizes = t.sizes();
  const Shape& strides = t.strides();
  const size_t d = sizes.size();
  MatView v;
  if (d == 3) v.batch = sizes[0], v.batchStride = strides[0];
  v.rows = sizes[d - 2], v.rowStride = strides[d - 2];
  v.cols = sizes[d - 1], v.colStride = strides[d - 1];
  return v;
}

/// Copies matrix `batch` of a half/bfloat16 operand into a dense float buffer.
template <typename T>
void toFloat(const Tensor& t, const MatView& v, int64_t batch, std::vector<float>& dst) {
  const int64_t r = v.rows, c = v.cols;
  dst.resize(static_cast<size_t>(r * c));
  const void* p = t.dataPtr();
  const int64_t base = batch * v.batchStride;
  float* d = dst.data();
  if (c == 1 || v.colStride == 1) {  // dense rows: one tight loop per row
    const auto* src = static_cast<const typename T::Stored*>(p);
    for (int64_t i = 0; i < r; ++i) {
      const auto* row = src + base + i * v.rowStride;
      for (int64_t j = 0; j < c; ++j) d[i * c + j] = T::load(row, j);
    }
    return;
  }
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j)
      d[i * c + j] = T::load(p, base + i * v.rowStride + j * v.colStride);
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
  const MatView va = matView(a), vb = matView(b);
  const int64_t B = va.batch, n = va.rows, m = va.cols, p = vb.cols;
  if (B == 0 || n == 0 || p == 0) return;
  // PyTorch calls cuBLAS (and so takes the thread's handle and workspace) only for a product
  // with work in it: an empty result or m == 0 returns or fills zeros first (addmm_out_cuda_impl,
  // bmm_out_cuda_impl).
  if (m > 0)
    if (DeviceContext* device = out.device()) useCublasHandle(device->allocator());
  if (!out.hasData() || !a.hasData() || !b.hasData()) return;
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
  const MatLayout la = layoutOf(n, m, va.rowStride, va.colStride);
  const MatLayout lb = layoutOf(m, p, vb.rowStride, vb.colStride);
  switch (a.dtype()) {
    case DType::Float32: {
      const auto* pa = a.data<float>();
      const auto* pb = b.data<float>();
      auto* po = out.data<float>();
      for (int64_t i = 0; i < B; ++i)
        blas::gemm(la.trans, lb.trans, n, p, m, 1.0f, pa + i * va.batchStride, la.ld,
                   pb + i * vb.batchStride, lb.ld, 0.0f, po + i * n * p, p);
      return;
    }
    case DType::Float64: {
      const auto* pa = a.data<double>();
      const auto* pb = b.data<double>();
      auto* po = out.data<double>();
      for (int64_t i = 0; i < B; ++i)
        blas::gemm(la.trans, lb.trans, n, p, m, 1.0, pa + i * va.batchStride, la.ld,
                   pb + i * vb.batchStride, lb.ld, 0.0, po + i * n * p, p);
      return;
    }
    case DType::Float16:
    case DType::BFloat16: {
      std::vector<float> fa, fb, fo(static_cast<size_t>(n * p));
      dispatchFloating(a.dtype(), [&](auto tag) {
        using T = decltype(tag);
        for (int64_t i = 0; i < B; ++i) {
          toFloat<T>(a, va, i, fa);
          toFloat<T>(b, vb, i, fb);
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
