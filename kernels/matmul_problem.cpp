#include "kernels/matmul_problem.h"

#include "core/util/blas.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>

namespace matmulviz::kernels {
namespace {

constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();

void checkSize(const char* name, std::int64_t value) {
  if (value < 1) {
    throw std::invalid_argument(std::string(name) + " = " + std::to_string(value) +
                                ": sizes must be at least 1");
  }
  if (value > kIntMax) {
    throw std::invalid_argument(std::string(name) + " = " + std::to_string(value) +
                                " exceeds 2^31 - 1, the largest size the kernels index");
  }
}

}  // namespace

void validate(const MatmulProblem& p, bool gathered) {
  checkSize("M", p.M);
  checkSize("K", p.K);
  checkSize("N", p.N);
  if (gathered) {
    checkSize("batch", p.batch);
    checkSize("table", p.table);
    if (p.batch * p.M > kIntMax || p.batch * p.M * std::max(p.K, p.N) > (std::int64_t{1} << 40)) {
      throw std::invalid_argument(
          "batch * M * max(K, N) = " + std::to_string(p.batch * p.M * std::max(p.K, p.N)) +
          " elements is too large for one launch");
    }
  }
  if (p.M * p.K > (std::int64_t{1} << 34) ||
      p.K * p.N * (gathered ? p.table : 1) > (std::int64_t{1} << 34) ||
      p.M * p.N > (std::int64_t{1} << 34)) {
    throw std::invalid_argument("an operand would hold more than 2^34 elements (64 GiB)");
  }
}

std::int64_t outputElements(const MatmulProblem& p, bool gathered) {
  return (gathered ? p.batch : 1) * p.M * p.N;
}

MatmulInputs makeInputs(const MatmulProblem& p, bool gathered, std::uint64_t seed) {
  validate(p, gathered);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  MatmulInputs in;
  const std::int64_t items = gathered ? p.batch : 1;
  const std::int64_t tables = gathered ? p.table : 1;
  in.a.resize(static_cast<std::size_t>(items * p.M * p.K));
  in.b.resize(static_cast<std::size_t>(tables * p.K * p.N));
  for (float& x : in.a) x = uniform(rng);
  for (float& x : in.b) x = uniform(rng);
  if (gathered) {
    std::uniform_int_distribution<std::int64_t> pick(0, p.table - 1);
    in.q.resize(static_cast<std::size_t>(p.batch));
    for (std::int64_t& x : in.q) x = pick(rng);
  }
  return in;
}

std::vector<double> referenceMatmul(const MatmulProblem& p, bool gathered, const MatmulInputs& in) {
  const std::int64_t items = gathered ? p.batch : 1;
  std::vector<double> a(in.a.begin(), in.a.end());
  std::vector<double> b(in.b.begin(), in.b.end());
  std::vector<double> out(static_cast<std::size_t>(items * p.M * p.N));
  for (std::int64_t n = 0; n < items; ++n) {
    const std::int64_t m = gathered ? in.q[static_cast<std::size_t>(n)] : 0;
    if (m < 0 || m >= (gathered ? p.table : 1)) {
      throw std::invalid_argument("q[" + std::to_string(n) + "] = " + std::to_string(m) +
                                  " is outside 0.." + std::to_string(p.table - 1));
    }
    blas::gemm(false, false, p.M, p.N, p.K, 1.0, a.data() + n * p.M * p.K, p.K,
               b.data() + m * p.K * p.N, p.N, 0.0, out.data() + n * p.M * p.N, p.N);
  }
  return out;
}

void blasMatmul(const MatmulProblem& p, bool gathered, const MatmulInputs& in, float* out) {
  const std::int64_t items = gathered ? p.batch : 1;
  for (std::int64_t n = 0; n < items; ++n) {
    const std::int64_t m = gathered ? in.q[static_cast<std::size_t>(n)] : 0;
    blas::gemm(false, false, p.M, p.N, p.K, 1.0f, in.a.data() + n * p.M * p.K, p.K,
               in.b.data() + m * p.K * p.N, p.N, 0.0f, out + n * p.M * p.N, p.N);
  }
}

double maxRelErr(const float* out, const std::vector<double>& ref) {
  double maxDiff = 0;
  double maxRef = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double o = out[i];
    if (!std::isfinite(o)) return std::numeric_limits<double>::infinity();
    maxDiff = std::max(maxDiff, std::abs(o - ref[i]));
    maxRef = std::max(maxRef, std::abs(ref[i]));
  }
  return maxRef > 0 ? maxDiff / maxRef : maxDiff;
}

}  // namespace matmulviz::kernels
