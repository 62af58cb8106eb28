#pragma once
// Thin, typed wrappers over CBLAS (OpenBLAS from Debian) for row-major GEMM.

#include <cstdint>

namespace matmulviz::blas {

/// C[M,N] = alpha * op(A)[M,K] @ op(B)[K,N] + beta * C, all row-major.
/// A is [M,K] with leading dimension lda (or [K,M] when transA), B is [K,N] (or [N,K] when
/// transB), C is [M,N] with leading dimension ldc. Sizes of 0 are allowed (no-op).
/// Source of the rule: BLAS sgemm/dgemm (netlib reference), CblasRowMajor layout. A product
/// with M == 1 or N == 1 (and K > 0) runs as one sgemv/dgemv instead: the same sums without
/// gemm's packing of both operands, which dominates at such sizes (a [1, 64] x [64, 64] row of
/// the forum post's strategy1); the order of the additions, so the last bits, may differ.
void gemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
          int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc);
void gemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K, double alpha, const double* A,
          int64_t lda, const double* B, int64_t ldb, double beta, double* C, int64_t ldc);

/// Number of threads OpenBLAS uses (openblas_get_num_threads).
int numThreads();

}  // namespace matmulviz::blas
