#include "op_check.h"

#include "core/autograd/grad_mode.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>

namespace matmulviz::test {

namespace {

/// The multi-index of flat (row-major) position `flat` in `sizes`.
Shape unflatten(int64_t flat, const Shape& sizes) {
  Shape idx(sizes.size(), 0);
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    idx[d] = flat % sizes[d];
    flat /= sizes[d];
  }
  return idx;
}

std::string num(double v) {
  std::ostringstream os;
  os.precision(10);
  os << v;
  return os.str();
}

/// sum_i op(xs)[i] * g[i], in float64, without a graph.
double loss(const OpFn& op, const std::vector<Tensor>& xs, const std::vector<double>& g) {
  NoGradGuard noGrad;
  const Ref out = toRef(op(xs));
  double l = 0;
  for (size_t i = 0; i < out.values.size(); ++i) l += out.values[i] * g[i];
  return l;
}

}  // namespace

double Ref::at(const Shape& idx) const {
  int64_t flat = 0;
  for (size_t d = 0; d < sizes.size(); ++d) flat = flat * sizes[d] + idx[d];
  return values[static_cast<size_t>(flat)];
}

Ref toRef(const Tensor& t) {
  return {t.sizes(), t.toDoubles()};
}

Ref refGather(const Ref& in, const Shape& outSizes, const std::function<Shape(Shape)>& toIn) {
  Ref out{outSizes, std::vector<double>(static_cast<size_t>(numelOf(outSizes)))};
  for (int64_t i = 0; i < out.numel(); ++i) out.values[i] = in.at(toIn(unflatten(i, outSizes)));
  return out;
}

Ref refReshape(const Ref& in, const Shape& sizes) {
  return {sizes, in.values};
}

// Why these numbers. The inputs are exactly representable in `dtype`, so the only errors are
// the accumulation (float32 in every case, as cuBLAS and PyTorch's CPU kernels do) and the
// rounding of the output to `dtype`. For K <= 40 terms of magnitude <= 1, float32
// accumulation errs by at most about K * 2^-24 * sum|a_k b_k|, 2.4e-6 of the terms' scale.
// - float32: the accumulation only: rtol 1e-5 (4x margin over that worst case, far more in
//   practice); atol 1e-5 * max|ref| covers an element whose terms cancel.
// - float16: rounding the output to 11 significant bits errs by up to 2^-11 = 4.9e-4 relative;
//   1e-3 (2x margin) relative to max|ref|, as an element far below max|ref| loses bits to
//   subnormals and cancellation is measured against the terms.
// - bfloat16: 8 significant bits: 2^-8 = 3.9e-3; 1e-2 (2.5x margin) relative to max|ref|.
// - float64: dgemm against a plain loop: 1e-12.
Tolerance productTolerance(DType dtype, double maxAbsRef) {
  double r = 1e-12;
  switch (dtype) {
    case DType::Float64:
      r = 1e-12;
      break;
    case DType::Float32:
      r = 1e-5;
      break;
    case DType::Float16:
      r = 1e-3;
      break;
    case DType::BFloat16:
      r = 1e-2;
      break;
    case DType::Int64:
    case DType::Bool:
      r = 0;
      break;
  }
  return {r * maxAbsRef, r};
}

std::vector<double> randomValues(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = dist(rng);
  return v;
}

Tensor tensorOn(const Shape& sizes, const std::vector<double>& values, DType dtype,
                const DevicePtr& device, const std::string& label) {
  const Tensor host = fromDoubles(sizes, values, dtype);
  if (!device) {
    host.setLabel(label);
    return host;
  }
  Tensor t = empty(sizes, dtype, device, label);
  copyInto(t, host);
  return t;
}

Tensor randomTensor(const Shape& sizes, DType dtype, uint64_t seed, const DevicePtr& device,
                    const std::string& label) {
  return tensorOn(sizes, randomValues(numelOf(sizes), seed), dtype, device, label);
}

Tensor int64Tensor(const Shape& sizes, const std::vector<int64_t>& values) {
  std::vector<double> v(values.begin(), values.end());
  return fromDoubles(sizes, v, DType::Int64);
}

bool valuesMatch(const Tensor& got, const Ref& want, Tolerance tol, std::string* firstMismatch) {
  if (got.sizes() != want.sizes) {
    if (firstMismatch)
      *firstMismatch = "sizes " + got.shapeString() + ", want " + shapeToString(want.sizes);
    return false;
  }
  const std::vector<double> values = got.toDoubles();
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double diff = std::abs(values[i] - want.values[i]);
    const double bound = tol.atol + tol.rtol * std::abs(want.values[i]);
    if (!(diff <= bound)) {
      if (firstMismatch)
        *firstMismatch = "element " + shapeToString(unflatten(i, want.sizes)) + " (flat " +
                         std::to_string(i) + "): got " + num(values[i]) + ", want " +
                         num(want.values[i]) + ", |diff| " + num(diff) +
                         " > atol + rtol*|ref| = " + num(bound);
      return false;
    }
  }
  return true;
}

void checkTensor(const Tensor& got, const Ref& want, DType dtype, Tolerance tol,
                 const std::string& what) {
  QVERIFY2(got.defined(), (what + ": undefined tensor").c_str());
  QVERIFY2(got.sizes() == want.sizes,
           (what + ": sizes " + got.shapeString() + ", want " + shapeToString(want.sizes)).c_str());
  QVERIFY2(got.dtype() == dtype, (what + ": dtype " + std::string(dtypeName(got.dtype())) +
                                  ", want " + std::string(dtypeName(dtype)))
                                     .c_str());
  if (!got.hasData()) return;  // meta: sizes and dtype only
  std::string why;
  QVERIFY2(valuesMatch(got, want, tol, &why), (what + ": " + why).c_str());
}

void checkGradients(const OpFn& op, const std::vector<Tensor>& inputs, uint64_t seed,
                    Tolerance tol) {
  constexpr double eps = 1e-6;
  bool anyGrad = false;
  for (const Tensor& x : inputs) {
    if (!x.requiresGrad()) continue;
    QVERIFY2(x.dtype() == DType::Float64 && x.isContiguous() && x.isLeaf(),
             "checkGradients: inputs must be contiguous float64 leaves");
    x.impl()->grad.reset();
    anyGrad = true;
  }
  const Tensor out = op(inputs);
  QVERIFY2(out.requiresGrad() == anyGrad, anyGrad
                                              ? "output does not require grad though an input does"
                                              : "output requires grad though no input does");
  if (!anyGrad) return;
  const std::vector<double> g = randomValues(out.numel(), seed);
  out.backward(tensorOn(out.sizes(), g, DType::Float64, out.storage().devicePtr(), "g"));

  for (size_t k = 0; k < inputs.size(); ++k) {
    const Tensor& x = inputs[k];
    if (!x.requiresGrad()) continue;
    const std::string what = "d(sum(op * g))/d input " + std::to_string(k);
    Tensor grad = x.grad();
    if (!grad.defined()) grad = zeros(x.sizes(), DType::Float64, nullptr, "zero grad");
    // Finite differences: perturb one element at a time in a fresh copy of input k.
    const std::vector<double> base = x.toDoubles();
    Ref numeric{x.sizes(), std::vector<double>(base.size())};
    std::vector<Tensor> xs = inputs;
    for (size_t j = 0; j < base.size(); ++j) {
      std::vector<double> v = base;
      v[j] = base[j] + eps;
      xs[k] = tensorOn(x.sizes(), v, DType::Float64, x.storage().devicePtr());
      const double lp = loss(op, xs, g);
      v[j] = base[j] - eps;
      xs[k] = tensorOn(x.sizes(), v, DType::Float64, x.storage().devicePtr());
      const double lm = loss(op, xs, g);
      numeric.values[j] = (lp - lm) / (2 * eps);
    }
    OPCHECK(checkTensor(grad, numeric, DType::Float64, tol, what));
  }
}

}  // namespace matmulviz::test
