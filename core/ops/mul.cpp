// at::mul with broadcasting (aten/src/ATen/native/BinaryOps.cpp) and MulBackward0
// (tools/autograd/derivatives.yaml: grad * other summed to self's shape, and the other way).
#include "core/autograd/grad_mode.h"
#include "core/autograd/node.h"
#include "core/ops/ops.h"
#include "core/ops/shape_rules.h"
#include "core/ops/strided_loop.h"

#include <stdexcept>

namespace matmulviz {

namespace {

class MulBackward final : public Node {
 public:
  MulBackward(const Tensor& self, const Tensor& other)
      : selfSizes_(self.sizes()), otherSizes_(other.sizes()) {
    if (self.requiresGrad()) other_ = SavedTensor(other, savedWhy("other", name(), self));
    if (other.requiresGrad()) self_ = SavedTensor(self, savedWhy("self", name(), other));
  }
  std::string name() const override { return "MulBackward0"; }
  TensorList apply(TensorList&& g) override {
    TensorList out(2);
    if (!g[0].defined()) return out;
    if (needsInputGrad(0)) out[0] = sumTo(mul(g[0], other_.get()), selfSizes_);
    if (needsInputGrad(1)) out[1] = sumTo(mul(g[0], self_.get()), otherSizes_);
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
  SavedTensor self_, other_;
};

}  // namespace

Tensor mul(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype())
    throw std::invalid_argument("mul: expected both operands to have the same dtype, but got " +
                                std::string(dtypeName(a.dtype())) + " and " +
                                std::string(dtypeName(b.dtype())));
  if (a.device() != b.device())
    throw std::invalid_argument("mul: expected both operands to be on the same device");
  const Shape sizes = broadcastShapes(a.sizes(), b.sizes());
  OpScope op(a.device(), "mul");
  Tensor out = empty(sizes, a.dtype(), a.storage().devicePtr(), "mul output");
  if (out.hasData() && b.hasData()) {
    NoGradGuard noGrad;
    copyInto(out, expand(a, sizes));
    const Tensor be = expand(b, sizes);
    if (ComputeBackend* backend = out.compute())
      backend->mulInPlace(out, be);
    else
      detail::dispatchFloating(out.dtype(), [&](auto tag) {
        using T = decltype(tag);
        void* po = out.dataPtr();
        const void* pb = be.dataPtr();
        detail::forEachRun(sizes, out.strides(), be.strides(),
                           [&](int64_t oo, int64_t ob, int64_t n, int64_t so, int64_t sb) {
                             for (int64_t i = 0; i < n; ++i)
                               T::store(po, oo + i * so,
                                        T::load(po, oo + i * so) * T::load(pb, ob + i * sb));
                           });
      });
  }
  if (anyRequiresGrad({&a, &b})) {
    auto node = std::make_shared<MulBackward>(a, b);
    node->nextEdges = {gradientEdge(a), gradientEdge(b)};
    setHistory(out, node);
  }
  return out;
}

}  // namespace matmulviz
