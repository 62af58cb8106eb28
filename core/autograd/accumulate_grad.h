#pragma once
// The node that ends a backward at a leaf: sets or adds to .grad, as
// torch/csrc/autograd/functions/accumulate_grad.h does (steals a gradient nobody else holds,
// otherwise copies; later gradients are added in place).

#include "core/autograd/node.h"

#include <limits>

namespace matmulviz {

class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(Tensor variable) : variable_(std::move(variable)) {
    sequenceNr = std::numeric_limits<uint64_t>::max();  // runs as soon as it is ready
  }
  std::string name() const override { return "AccumulateGrad"; }
  TensorList apply(TensorList&& grads) override;
  const Tensor& variable() const { return variable_; }

 private:
  Tensor variable_;
};

}  // namespace matmulviz
