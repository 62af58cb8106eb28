#pragma once
// The one helper that checks an op of the engine against a float64 reference, forward and
// backward (the project's tolerance rule: shape, then dtype, then values with atol + rtol * |ref|;
// gradients also by finite differences).
//
// - Ref / refGather: a plain float64 n-d array and the index-mapping reference the tests write
//   their expected values with (no engine code involved).
// - checkTensor: compares a tensor with a Ref: sizes first, then dtype, then every value with
//   |got - want| <= atol + rtol * |want|, naming the first failing element.
// - checkGradients: a finite-difference check in float64. For L = sum(op(x) * g) with a fixed
//   random g of the output's shape, runs op(x).backward(g) and compares each x.grad (for every
//   input that requires grad) with the central difference (L(x + eps) - L(x - eps)) / (2 eps),
//   eps = 1e-6, element by element.
//
// The checks use QVERIFY2/QCOMPARE, so they return early on failure: call them through
// OPCHECK(...) from a test function so that the test function stops too.

#include "core/ops/ops.h"

#include <QtTest/QtTest>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

/// Runs `call` (a void helper using QVERIFY2/QCOMPARE) and returns from the calling test
/// function when it failed.
#define OPCHECK(call)                       \
  do {                                      \
    call;                                   \
    if (QTest::currentTestFailed()) return; \
  } while (false)

namespace matmulviz::test {

/// A row-major float64 n-d array: the reference side of every check.
struct Ref {
  Shape sizes;
  std::vector<double> values;
  int64_t numel() const { return static_cast<int64_t>(values.size()); }
  /// Element at a multi-index (row-major).
  double at(const Shape& idx) const;
};

/// The values of a tensor (any dtype, any strides, host or device with data) as a Ref.
Ref toRef(const Tensor& t);
/// out[i...] = in[toIn(i...)] for every multi-index of `outSizes`.
Ref refGather(const Ref& in, const Shape& outSizes, const std::function<Shape(Shape)>& toIn);
/// The same values (row-major order) under new sizes: view/reshape/squeeze/clone references.
Ref refReshape(const Ref& in, const Shape& sizes);

/// Tolerances of a forward check: |got - want| <= atol + rtol * |want|.
struct Tolerance {
  double atol = 0;
  double rtol = 0;
};

/// The tolerance table for a product (mm, bmm, matmul, gatherBmm) computed in `dtype` from
/// inputs exactly representable in `dtype`, against the float64 reference of those inputs.
/// `maxAbsRef` is max |ref| over the output: low-precision errors scale with the magnitude of
/// the terms, not with a (possibly cancelled) single element. Justification in op_check.cpp.
Tolerance productTolerance(DType dtype, double maxAbsRef);

/// Deterministic pseudo-random values in [-1, 1) (std::mt19937_64 seeded with `seed`).
std::vector<double> randomValues(int64_t n, uint64_t seed);
/// A contiguous leaf tensor of random values rounded to `dtype`, on `device` (host when null).
Tensor randomTensor(const Shape& sizes, DType dtype, uint64_t seed, const DevicePtr& device = {},
                    const std::string& label = "x");
/// A host int64 tensor (an index such as the seed's q).
Tensor int64Tensor(const Shape& sizes, const std::vector<int64_t>& values);
/// A copy of a tensor's values into a new contiguous tensor of `dtype` on `device`.
Tensor tensorOn(const Shape& sizes, const std::vector<double>& values, DType dtype,
                const DevicePtr& device, const std::string& label = "x");

/// Whether every value of `got` is within atol + rtol * |want| (sizes must match); when not,
/// `firstMismatch` names the first failing element.
bool valuesMatch(const Tensor& got, const Ref& want, Tolerance tol, std::string* firstMismatch);

/// Sizes, then dtype, then values (atol + rtol * |ref|); `what` names the tensor in messages.
void checkTensor(const Tensor& got, const Ref& want, DType dtype, Tolerance tol,
                 const std::string& what);

using OpFn = std::function<Tensor(const std::vector<Tensor>&)>;

/// Finite-difference gradient check in float64 (see the file comment). `inputs` are contiguous
/// float64 leaves; those with requiresGrad() are checked. `seed` makes g. Leaves the analytic
/// gradients in inputs[i].grad() (they are reset first).
void checkGradients(const OpFn& op, const std::vector<Tensor>& inputs, uint64_t seed,
                    Tolerance tol = {1e-7, 1e-6});

}  // namespace matmulviz::test
