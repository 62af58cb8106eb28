#pragma once
// A matmul workload for the kernel variants: sizes, deterministic inputs, the float64 BLAS
// reference and the error measure.

#include <cstdint>
#include <vector>

namespace matmulviz::kernels {

/// C[M, N] = A[M, K] @ B[K, N]. For gather_bmm the same per item, over `batch` items, each
/// multiplying its A by the matrix of B chosen by q: a [batch, M, K], b [table, K, N],
/// q [batch] in 0..table-1, out [batch, M, N] (the seed's N, I, J, K, M are batch, M, K, N,
/// table).
struct MatmulProblem {
  std::int64_t M = 0;
  std::int64_t K = 0;
  std::int64_t N = 0;
  std::int64_t batch = 1;
  std::int64_t table = 1;
};

/// Row-major float32 inputs: a [batch, M, K], b [table, K, N] (batch = table = 1 for the 2-D
/// kernels), q [batch] (empty for the 2-D kernels).
struct MatmulInputs {
  std::vector<float> a;
  std::vector<float> b;
  std::vector<std::int64_t> q;
};

/// Throws std::invalid_argument when a size is below 1 or an index would overflow int32
/// (kernels index with int, as CUDA code does).
void validate(const MatmulProblem& problem, bool gathered);

/// Elements of the output: batch * M * N (batch 1 unless gathered).
std::int64_t outputElements(const MatmulProblem& problem, bool gathered);

/// Uniform values in [-1, 1) and, when gathered, q uniform in [0, table), from `seed`
/// (std::mt19937_64): the same seed gives the same inputs on every machine.
MatmulInputs makeInputs(const MatmulProblem& problem, bool gathered, std::uint64_t seed);

/// The product in float64 with BLAS (dgemm, one call per item when gathered).
std::vector<double> referenceMatmul(const MatmulProblem& problem, bool gathered,
                                    const MatmulInputs& in);

/// The product in float32 with BLAS (sgemm), the CPU reference of the kernel registry.
void blasMatmul(const MatmulProblem& problem, bool gathered, const MatmulInputs& in, float* out);

/// max|out - ref| / max|ref| (the reports' max_rel_err); +inf when out holds NaN or inf; the
/// absolute error when ref is all zeros.
double maxRelErr(const float* out, const std::vector<double>& ref);

}  // namespace matmulviz::kernels
