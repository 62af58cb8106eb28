// torch.stack (aten/src/ATen/native/TensorShape.cpp: cat of the unsqueezed inputs into one new
// tensor) and StackBackward0 (tools/autograd/derivatives.yaml: stack_tensors_backward, each input
// gets grad.select(dim, i), a view; saves no tensors, only dim and the inputs' dtypes).
#include "core/autograd/grad_mode.h"
#include "core/autograd/node.h"
#include "core/ops/pointwise_kernels.h"

#include <stdexcept>

namespace matmulviz {

namespace {

class StackBackward final : public Node {
 public:
  StackBackward(int64_t dim, std::vector<DType> dtypes) : dim_(dim), dtypes_(std::move(dtypes)) {}
  std::string name() const override { return "StackBackward0"; }
  TensorList apply(TensorList&& g) override {
    TensorList out(dtypes_.size());
    if (!g[0].defined()) return out;
    for (size_t i = 0; i < dtypes_.size(); ++i) {
      if (!needsInputGrad(i)) continue;
      Tensor s = select(g[0], dim_, static_cast<int64_t>(i));
      out[i] = s.dtype() == dtypes_[i] ? s : toDType(s, dtypes_[i]);
    }
    return out;
  }

 private:
  int64_t dim_;
  std::vector<DType> dtypes_;
};

}  // namespace

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) {
  if (tensors.empty()) throw std::invalid_argument("stack expects a non-empty TensorList");
  const Tensor& first = tensors.front();
  dim = wrapDim(dim, first.dim() + 1);
  DType dtype = first.dtype();
  std::vector<DType> dtypes;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (t.sizes() != first.sizes())
      throw std::invalid_argument("stack expects each tensor to be equal size, but got " +
                                  first.shapeString() + " at entry 0 and " + t.shapeString() +
                                  " at entry " + std::to_string(i));
    if (t.device() != first.device())
      throw std::invalid_argument(
          "Expected all tensors to be on the same device, but found at least two devices");
    dtype = promoteTypes(dtype, t.dtype());
    dtypes.push_back(t.dtype());
  }
  Shape sizes = first.sizes();
  sizes.insert(sizes.begin() + dim, static_cast<int64_t>(tensors.size()));
  OpScope op(first.device(), "stack");
  Tensor out = empty(sizes, dtype, first.storage().devicePtr(), "stack output");
  if (out.hasData()) {
    NoGradGuard noGrad;
    for (size_t i = 0; i < tensors.size(); ++i)
      copyInto(select(out, dim, static_cast<int64_t>(i)), tensors[i]);
  }
  if (anyRequiresGrad(tensors)) {
    auto node = std::make_shared<StackBackward>(dim, std::move(dtypes));
    for (const Tensor& t : tensors) node->nextEdges.push_back(gradientEdge(t));
    setHistory(out, node);
  }
  return out;
}

}  // namespace matmulviz
