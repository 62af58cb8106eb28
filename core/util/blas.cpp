#include "core/util/blas.h"

#include <cblas.h>

#include <algorithm>
#include <type_traits>

extern "C" int openblas_get_num_threads(void);

namespace matmulviz::blas {
namespace {
CBLAS_TRANSPOSE tr(bool t) {
  return t ? CblasTrans : CblasNoTrans;
}

blasint bi(int64_t v) {
  return static_cast<blasint>(v);
}

template <typename T>
void gemv(bool trans, int64_t rows, int64_t cols, T alpha, const T* A, int64_t lda, const T* x,
          int64_t incx, T beta, T* y, int64_t incy) {
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemv(CblasRowMajor, tr(trans), bi(rows), bi(cols), alpha, A, bi(lda), x, bi(incx), beta,
                y, bi(incy));
  else
    cblas_dgemv(CblasRowMajor, tr(trans), bi(rows), bi(cols), alpha, A, bi(lda), x, bi(incx), beta,
                y, bi(incy));
}

/// A product with one row (M == 1) or one column (N == 1) of C as one matrix-vector product:
/// OpenBLAS's gemm packs both operands first, which costs more than the arithmetic at these
/// sizes; gemv reads the matrix in place. Returns false when the shape is not one of those.
template <typename T>
bool asGemv(bool transA, bool transB, int64_t M, int64_t N, int64_t K, T alpha, const T* A,
            int64_t lda, const T* B, int64_t ldb, T beta, T* C, int64_t ldc) {
  if (K == 0 || (M != 1 && N != 1)) return false;  // K == 0: gemm's C = beta * C
  // y = beta * y reads y; BLAS may keep a NaN of uninitialised memory when beta is 0 (0 * NaN).
  if (beta == T{0}) {
    if (M == 1)
      std::fill_n(C, N, T{0});
    else
      for (int64_t i = 0; i < M; ++i) C[i * ldc] = T{0};
  }
  if (M == 1) {  // c[N] = op(B)^T a, a: row 0 of op(A) ([1, K], or column 0 of A stored [K, 1])
    const int64_t incA = transA ? lda : 1;
    if (transB)  // B stored [N, K]
      gemv(false, N, K, alpha, B, ldb, A, incA, beta, C, 1);
    else  // B stored [K, N]
      gemv(true, K, N, alpha, B, ldb, A, incA, beta, C, 1);
    return true;
  }
  // N == 1: c[M] (stride ldc) = op(A) b, b: column 0 of op(B)
  const int64_t incB = transB ? 1 : ldb;
  if (transA)  // A stored [K, M]
    gemv(true, K, M, alpha, A, lda, B, incB, beta, C, ldc);
  else  // A stored [M, K]
    gemv(false, M, K, alpha, A, lda, B, incB, beta, C, ldc);
  return true;
}

}  // namespace

void gemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
          int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  if (M == 0 || N == 0) return;
  if (asGemv(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)) return;
  cblas_sgemm(CblasRowMajor, tr(transA), tr(transB), bi(M), bi(N), bi(K), alpha, A, bi(lda), B,
              bi(ldb), beta, C, bi(ldc));
}

void gemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K, double alpha, const double* A,
          int64_t lda, const double* B, int64_t ldb, double beta, double* C, int64_t ldc) {
  if (M == 0 || N == 0) return;
  if (asGemv(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)) return;
  cblas_dgemm(CblasRowMajor, tr(transA), tr(transB), bi(M), bi(N), bi(K), alpha, A, bi(lda), B,
              bi(ldb), beta, C, bi(ldc));
}

int numThreads() {
  return openblas_get_num_threads();
}

}  // namespace matmulviz::blas
