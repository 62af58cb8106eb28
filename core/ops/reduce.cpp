// Reductions: sum (all elements) and sumTo (the backward of broadcasting).
#include "core/autograd/node.h"
#include "core/memory/reduction_temporaries.h"
#include "core/ops/ops.h"
#include "core/ops/pointwise_kernels.h"
#include "core/ops/strided_loop.h"

#include <stdexcept>
#include <string>
#include <vector>

namespace matmulviz {

namespace {

class SumBackward final : public Node {
 public:
  explicit SumBackward(Shape sizes) : sizes_(std::move(sizes)) {}
  std::string name() const override { return "SumBackward0"; }
  TensorList apply(TensorList&& g) override { return {expand(g[0], sizes_)}; }

 private:
  Shape sizes_;
};

/// out (int64, zeroed) += the elements of an int64 or bool `t`, each at out's offset given by
/// `outStrides` (t.dim() entries, 0 on summed dims): at::sum of an integral tensor, exact.
void sumIntegralInto(const Tensor& out, const Shape& outStrides, const Tensor& t) {
  if (t.compute())
    throw std::invalid_argument("sum: " + std::string(dtypeName(t.dtype())) +
                                " is not supported on a device with its own memory yet (" +
                                t.compute()->name() + ")");
  if (!t.hasData()) return;
  auto* po = out.data<int64_t>();
  const void* pt = t.dataPtr();
  const bool isBool = t.dtype() == DType::Bool;
  detail::forEachRun(t.sizes(), outStrides, t.strides(),
                     [&](int64_t oo, int64_t ot, int64_t n, int64_t so, int64_t st) {
                       for (int64_t i = 0; i < n; ++i)
                         po[oo + i * so] += isBool
                                                ? static_cast<const uint8_t*>(pt)[ot + i * st] != 0
                                                : static_cast<const int64_t*>(pt)[ot + i * st];
                     });
}

}  // namespace

void detail::replayReductionTemporaries(const Tensor& t, const std::vector<bool>& reduced) {
  DeviceContext* device = t.device();
  if (!device || t.numel() == 0) return;
  std::vector<ReductionDim> dims;
  for (int64_t d = 0; d < t.dim(); ++d)
    dims.push_back({t.size(d), t.stride(d), reduced[static_cast<size_t>(d)]});
  // sizeof(arg_t): float accumulates float, float16 and bfloat16; double and int64 are 8 bytes.
  const int64_t accumulateBytes = t.dtype() == DType::Float64 || !isFloating(t.dtype()) ? 8 : 4;
  replayTemporaries(device->allocator(),
                    reductionTemporaries(dims, accumulateBytes, t.storageOffset(),
                                         device->allocator().options().pytorch.architecture()));
}

Tensor sumTo(const Tensor& t, const Shape& sizes) {
  const bool integral = !isFloating(t.dtype());  // summed into int64, as at::sum
  if (t.sizes() == sizes && !integral) return t;
  const int64_t lead = t.dim() - static_cast<int64_t>(sizes.size());
  if (lead < 0) throw std::invalid_argument("sumTo: target has more dims than the tensor");
  OpScope op(t.device(), "sum_to_size");
  Tensor out = zeros(sizes, integral ? DType::Int64 : t.dtype(), t.storage().devicePtr(), "sum");
  // Out strides seen from t's index space: 0 on leading and broadcast dims.
  Shape outStrides(static_cast<size_t>(t.dim()), 0);
  std::vector<bool> reduced(static_cast<size_t>(t.dim()), true);
  for (int64_t d = lead; d < t.dim(); ++d) {
    const int64_t s = sizes[d - lead];
    if (s == t.size(d)) {
      outStrides[d] = out.stride(d - lead);
      reduced[static_cast<size_t>(d)] = false;
    } else if (s != 1) {
      throw std::invalid_argument("sumTo: size " + std::to_string(s) + " cannot be reached from " +
                                  std::to_string(t.size(d)));
    }
  }
  detail::replayReductionTemporaries(t, reduced);
  if (!t.hasData()) return out;
  if (integral) {
    sumIntegralInto(out, outStrides, t);
    return out;
  }
  if (ComputeBackend* be = t.compute()) {
    be->sumInto(out, outStrides, t);
    return out;
  }
  // Accumulate in double and round once, as PyTorch accumulates float16/bfloat16 in float32.
  std::vector<double> acc(static_cast<size_t>(out.numel()), 0.0);
  detail::dispatchFloating(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const void* pt = t.dataPtr();
    detail::forEachRun(t.sizes(), outStrides, t.strides(),
                       [&](int64_t oo, int64_t ot, int64_t n, int64_t so, int64_t st) {
                         for (int64_t i = 0; i < n; ++i)
                           acc[oo + i * so] += T::load(pt, ot + i * st);
                       });
    for (size_t k = 0; k < acc.size(); ++k)
      T::store(out.dataPtr(), static_cast<int64_t>(k), static_cast<typename T::Acc>(acc[k]));
  });
  return out;
}

Tensor sum(const Tensor& t) {
  if (!isFloating(t.dtype())) {
    // An int64 or bool sum is an int64 (at::sum's default dtype for integral inputs), exact.
    OpScope op(t.device(), "sum");
    Tensor out = zeros({}, DType::Int64, t.storage().devicePtr(), "sum");
    detail::replayReductionTemporaries(t, std::vector<bool>(static_cast<size_t>(t.dim()), true));
    sumIntegralInto(out, Shape(static_cast<size_t>(t.dim()), 0), t);
    return out;  // integral: never requires grad
  }
  OpScope op(t.device(), "sum");
  // An integral input sums to int64 (ReduceOps.cpp: sum -> get_dtype_from_self, promoting
  // integers); a float one keeps its dtype.
  const bool integral = !isFloating(t.dtype());
  Tensor out = zeros({}, integral ? DType::Int64 : t.dtype(), t.storage().devicePtr(), "sum");
  detail::replayReductionTemporaries(t, std::vector<bool>(static_cast<size_t>(t.dim()), true));
  if (integral && t.hasData()) {
    detail::requireHostCompute(t, "sum of an integer tensor");
    int64_t acc = 0;
    const void* pt = t.dataPtr();
    const bool i64 = t.dtype() == DType::Int64;
    detail::forEachRun(t.sizes(), t.strides(), t.strides(),
                       [&](int64_t o, int64_t, int64_t n, int64_t s, int64_t) {
                         for (int64_t i = 0; i < n; ++i)
                           acc +=
                               i64 ? detail::I64::load(pt, o + i * s)
                                   : static_cast<int64_t>(loadAsDouble(pt, t.dtype(), o + i * s));
                       });
    detail::I64::store(out.dataPtr(), 0, acc);
  } else if (ComputeBackend* be = t.compute()) {
    be->sumInto(out, Shape(static_cast<size_t>(t.dim()), 0), t);
  } else if (t.hasData()) {
    detail::dispatchFloating(t.dtype(), [&](auto tag) {
      using T = decltype(tag);
      double acc = 0;
      const void* pt = t.dataPtr();
      detail::forEachRun(t.sizes(), t.strides(), t.strides(),
                         [&](int64_t o, int64_t, int64_t n, int64_t s, int64_t) {
                           for (int64_t i = 0; i < n; ++i) acc += T::load(pt, o + i * s);
                         });
      T::store(out.dataPtr(), 0, static_cast<typename T::Acc>(acc));
    });
  }
  if (anyRequiresGrad({&t})) {
    auto node = std::make_shared<SumBackward>(t.sizes());
    node->nextEdges = {gradientEdge(t)};
    setHistory(out, node);
  }
  return out;
}

}  // namespace matmulviz
