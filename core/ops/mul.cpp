// at::mul with broadcasting (aten/src/ATen/native/BinaryOps.cpp) and MulBackward0
// (tools/autograd/derivatives.yaml: grad * other summed to self's shape, and the other way).
#include "core/autograd/grad_mode.h"
#include "core/autograd/node.h"
#include "core/ops/pointwise_kernels.h"

#include <stdexcept>

namespace matmulviz {

namespace {

class MulBackward final : public Node {
 public:
  MulBackward(const Tensor& self, const Tensor& other)
      : selfSizes_(self.sizes()),
        otherSizes_(other.sizes()),
        selfType_(self.dtype()),
        otherType_(other.dtype()) {
    if (self.requiresGrad()) other_ = SavedTensor(other, savedWhy("other", name(), self));
    if (other.requiresGrad()) self_ = SavedTensor(self, savedWhy("self", name(), other));
  }
  std::string name() const override { return "MulBackward0"; }
  TensorList apply(TensorList&& g) override {
    TensorList out(2);
    if (!g[0].defined()) return out;
    // The formulas in sorted name order ("other" < "self", tools/autograd/load_derivatives.py),
    // then the engine's validate_outputs sums each to its input's shape, in input order.
    if (needsInputGrad(1)) out[1] = mul(g[0], self_.get());
    if (needsInputGrad(0)) out[0] = mul(g[0], other_.get());
    detail::reduceGradsInOrder(out, {selfSizes_, otherSizes_}, {selfType_, otherType_});
    return out;
  }
  void releaseSaved() override {
    self_.reset();
    other_.reset();
  }
  std::vector<std::pair<std::string, Tensor>> savedTensors() const override {
    return {{"self", self_.get()}, {"other", other_.get()}};
  }

 private:
  Shape selfSizes_, otherSizes_;
  DType selfType_, otherType_;
  SavedTensor self_, other_;
};

}  // namespace

Tensor mul(const Tensor& a, const Tensor& b) {
  if (a.device() != b.device())
    throw std::invalid_argument("mul: expected both operands to be on the same device");
  const Shape sizes = broadcastShapes(a.sizes(), b.sizes());
  const DType dtype = resultType(a, b);  // promotes as at::mul (float16 * float32: float32)
  OpScope op(a.device(), "mul");
  Tensor out = empty(sizes, dtype, a.storage().devicePtr(), "mul output");
  if (out.hasData() && b.hasData()) {
    NoGradGuard noGrad;
    const Tensor be = expand(b, sizes);
    if (ComputeBackend* backend = out.compute()) {
      if (a.dtype() != dtype || b.dtype() != dtype)
        detail::requireHostCompute(out, "mul with type promotion");
      copyInto(out, expand(a, sizes));
      backend->mulInPlace(out, be);
    } else {
      copyInto(out, expand(a, sizes));  // converts to the result dtype
      detail::combineInPlace(out, be, [](auto x, auto y) { return x * y; });
    }
  }
  if (anyRequiresGrad({&a, &b})) {
    auto node = std::make_shared<MulBackward>(a, b);
    node->nextEdges = {gradientEdge(a), gradientEdge(b)};
    setHistory(out, node);
  }
  return out;
}

Tensor fma(const Tensor& a, const Tensor& b, const Tensor& c) {
  NoGradGuard noGrad;
  OpScope op(a.device(), "fma");
  Tensor out = mul(a, b);
  if (broadcastShapes(out.sizes(), c.sizes()) != out.sizes())
    throw std::invalid_argument("fma: c must broadcast to the shape of a * b");
  if (c.dtype() != out.dtype()) throw std::invalid_argument("fma: c's dtype must be a * b's");
  addInPlace(out, expand(c, out.sizes()));
  return out;
}

}  // namespace matmulviz
