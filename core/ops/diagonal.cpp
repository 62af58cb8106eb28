// t.diagonal(0, dim1, dim2) (aten/src/ATen/native/TensorShape.cpp) and DiagonalBackward0
// (diagonal_backward: the gradient written into the diagonal of zeros of the input's shape).
#include "core/autograd/node.h"
#include "core/ops/ops.h"
#include "core/ops/shape_rules.h"

#include <algorithm>
#include <stdexcept>

namespace matmulviz {

namespace {

class DiagonalBackward final : public Node {
 public:
  DiagonalBackward(Shape inputSizes, int64_t dim1, int64_t dim2)
      : inputSizes_(std::move(inputSizes)), dim1_(dim1), dim2_(dim2) {}
  std::string name() const override { return "DiagonalBackward0"; }
  TensorList apply(TensorList&& g) override {
    OpScope op(g[0].device(), name());
    Tensor gi = zeros(inputSizes_, g[0].dtype(), g[0].storage().devicePtr(),
                      "grad of diagonal input (zeros)");
    copyInto(diagonal(gi, dim1_, dim2_), g[0]);
    return {gi};
  }

 private:
  Shape inputSizes_;
  int64_t dim1_, dim2_;
};

}  // namespace

Tensor diagonal(const Tensor& t, int64_t dim1, int64_t dim2) {
  const int64_t nd = t.dim();
  dim1 = wrapDim(dim1, nd);
  dim2 = wrapDim(dim2, nd);
  if (dim1 == dim2)
    throw std::invalid_argument("diagonal dimensions cannot be identical " + std::to_string(dim1) +
                                ", " + std::to_string(dim2));
  Shape sizes, strides;
  for (int64_t d = 0; d < nd; ++d)
    if (d != dim1 && d != dim2) {
      sizes.push_back(t.size(d));
      strides.push_back(t.stride(d));
    }
  sizes.push_back(std::min(t.size(dim1), t.size(dim2)));
  strides.push_back(t.stride(dim1) + t.stride(dim2));
  Tensor out = makeView(t, sizes, strides, t.storageOffset());
  if (anyRequiresGrad({&t})) {
    auto node = std::make_shared<DiagonalBackward>(t.sizes(), dim1, dim2);
    node->nextEdges = {gradientEdge(t)};
    setHistory(out, node);
  }
  return out;
}

}  // namespace matmulviz
