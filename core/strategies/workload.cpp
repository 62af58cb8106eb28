#include "core/strategies/workload.h"

#include "core/ops/ops.h"
#include "core/util/bad_input.h"

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>

namespace matmulviz {

void Workload::validate() const {
  const std::pair<const char*, int64_t> fields[] = {{"n", n}, {"m", m}, {"i", i},
                                                    {"j", j}, {"k", k}, {"batch", batch}};
  for (auto [name, v] : fields)
    if (v < 1)
      throw BadInput(name, std::to_string(v), "1 or more",
                     "must be at least 1, got " + std::to_string(v));
  const auto limit = std::numeric_limits<int64_t>::max() / 16;
  auto product = [&](std::initializer_list<int64_t> xs, const char* what) {
    long double p = 1;
    for (int64_t x : xs) p *= static_cast<long double>(x);
    if (p > static_cast<long double>(limit))
      throw BadInput("sizes", "", "", std::string(what) + " has too many elements");
  };
  product({n, i, j}, "a [N, I, J]");
  product({m, j, k}, "c [M, J, K]");
  product({n, i, k}, "out [N, I, K]");
  product({n, j, k}, "c[q] [N, J, K]");
}

Inputs makeRandomInputs(const Workload& w, uint64_t seed, bool withData) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  Inputs in;
  if (withData) {
    in.a = empty({w.n, w.i, w.j}, w.dtype, nullptr, "a");
    in.c = empty({w.m, w.j, w.k}, w.dtype, nullptr, "c");
    for (const Tensor* t : {&in.a, &in.c})
      for (int64_t x = 0, e = t->numel(); x < e; ++x)
        storeFromDouble(t->dataPtr(), w.dtype, x, uniform(rng));
  }
  in.q = empty({w.n}, DType::Int64, nullptr, "q");
  std::uniform_int_distribution<int64_t> index(0, w.m - 1);
  auto* q = in.q.data<int64_t>();
  for (int64_t x = 0; x < w.n; ++x) q[x] = index(rng);
  return in;
}

void checkInputs(const Workload& w, const Inputs& in) {
  auto expect = [](const Tensor& t, const Shape& s, const char* name) {
    if (t.sizes() != s)
      throw BadInput(name, t.shapeString(), shapeToString(s),
                     "expected shape " + shapeToString(s) + " but got " + t.shapeString());
  };
  if (in.a.defined()) expect(in.a, {w.n, w.i, w.j}, "a");
  if (in.c.defined()) expect(in.c, {w.m, w.j, w.k}, "c");
  expect(in.q, {w.n}, "q");
  if (in.q.dtype() != DType::Int64)
    throw BadInput("q", std::string(dtypeName(in.q.dtype())), "int64", "must be int64");
  const auto* q = in.q.data<int64_t>();
  for (int64_t x = 0; x < w.n; ++x)
    if (q[x] < 0 || q[x] >= w.m)
      throw BadInput("q", std::to_string(q[x]), "[0, M)",
                     "q[" + std::to_string(x) + "] = " + std::to_string(q[x]) +
                         " is outside [0, M) = [0, " + std::to_string(w.m) + ")");
}

namespace {
std::vector<double> asDoubles(const Tensor& t) {
  return t.toDoubles();
}
}  // namespace

Tensor referenceOutput(const Inputs& in) {
  const int64_t N = in.a.size(0), I = in.a.size(1), J = in.a.size(2), K = in.c.size(2);
  const auto a = asDoubles(in.a), c = asDoubles(in.c);
  const auto* q = in.q.data<int64_t>();
  Tensor ref = zeros({N, I, K}, DType::Float64, nullptr, "reference out");
  auto* r = ref.data<double>();
  for (int64_t n = 0; n < N; ++n) {
    const double* cm = c.data() + q[n] * J * K;
    for (int64_t i = 0; i < I; ++i) {
      double* row = r + (n * I + i) * K;
      const double* arow = a.data() + (n * I + i) * J;
      for (int64_t j = 0; j < J; ++j) {
        const double x = arow[j];
        const double* crow = cm + j * K;
        for (int64_t k = 0; k < K; ++k) row[k] += x * crow[k];
      }
    }
  }
  return ref;
}

void referenceGradients(const Inputs& in, const Tensor& gradOutput, Tensor& dA, Tensor& dC) {
  const int64_t N = in.a.size(0), I = in.a.size(1), J = in.a.size(2);
  const int64_t M = in.c.size(0), K = in.c.size(2);
  const auto a = asDoubles(in.a), c = asDoubles(in.c), g = asDoubles(gradOutput);
  const auto* q = in.q.data<int64_t>();
  dA = zeros({N, I, J}, DType::Float64, nullptr, "reference dA");
  dC = zeros({M, J, K}, DType::Float64, nullptr, "reference dC");
  auto* da = dA.data<double>();
  auto* dc = dC.data<double>();
  for (int64_t n = 0; n < N; ++n) {
    const double* cm = c.data() + q[n] * J * K;
    double* dcm = dc + q[n] * J * K;
    for (int64_t i = 0; i < I; ++i) {
      const double* grow = g.data() + (n * I + i) * K;
      const double* arow = a.data() + (n * I + i) * J;
      double* darow = da + (n * I + i) * J;
      for (int64_t j = 0; j < J; ++j) {
        double s = 0;
        const double* crow = cm + j * K;
        double* dcrow = dcm + j * K;
        for (int64_t k = 0; k < K; ++k) {
          s += grow[k] * crow[k];
          dcrow[k] += arow[j] * grow[k];
        }
        darow[j] = s;
      }
    }
  }
}

double maxRelativeError(const Tensor& x, const Tensor& ref) {
  if (x.sizes() != ref.sizes())
    throw std::invalid_argument("maxRelativeError: shapes " + x.shapeString() + " and " +
                                ref.shapeString() + " differ");
  const auto xs = hostReadable(x, "host copy").toDoubles(), rs = ref.toDoubles();
  double maxDiff = 0, maxRef = 0;
  bool nan = false, inf = false;
  for (size_t e = 0; e < xs.size(); ++e) {
    nan = nan || std::isnan(xs[e]) || std::isnan(rs[e]);
    inf = inf || std::isinf(xs[e]) || std::isinf(rs[e]);
    maxDiff = std::max(maxDiff, std::abs(xs[e] - rs[e]));
    maxRef = std::max(maxRef, std::abs(rs[e]));
  }
  if (nan) return std::numeric_limits<double>::quiet_NaN();
  if (inf) return std::numeric_limits<double>::infinity();
  if (maxRef == 0) return maxDiff;
  return maxDiff / maxRef;
}

namespace {

/// "3 NaN and 1 Inf of 100 elements"; empty when all are finite.
std::string countNonFinite(const std::vector<double>& v) {
  int64_t nan = 0, inf = 0;
  for (double d : v) {
    nan += std::isnan(d) ? 1 : 0;
    inf += std::isinf(d) ? 1 : 0;
  }
  if (nan + inf == 0) return {};
  return std::to_string(nan) + " NaN and " + std::to_string(inf) + " Inf of " +
         std::to_string(v.size()) + " elements";
}

}  // namespace

std::string nonFiniteWarning(const std::string& name, const Tensor& x, const Tensor& ref) {
  const std::string inX = countNonFinite(hostReadable(x, "host copy").toDoubles());
  const std::string inRef = countNonFinite(ref.toDoubles());
  if (inX.empty() && inRef.empty()) return {};
  std::string what = inX.empty() ? "" : name + " holds " + inX;
  if (!inRef.empty())
    what += (what.empty() ? "the float64 reference of " + name : "; its float64 reference") +
            " holds " + inRef;
  return what + ": max_rel_err of " + name + " is not finite and the accuracy check fails";
}

}  // namespace matmulviz
