#pragma once
// The backward pass (torch.autograd.backward): runs the graph from a root tensor, each node once
// all gradients for it have arrived, in PyTorch's order (most recently created node first, leaf
// accumulators as soon as they are ready), summing gradients that meet at one input (the
// InputBuffer rule: in place when nobody else holds the buffer). Saved tensors are released as
// each node finishes (retain_graph=False). Runs without building a graph (no create_graph).
//
// Errors: std::invalid_argument when `gradOutput` has another shape than `root`;
// std::logic_error when `root` does not require grad. OutOfMemoryError from the allocator.

#include "core/tensor/tensor.h"

namespace matmulviz {

void runBackward(const Tensor& root, const Tensor& gradOutput);

}  // namespace matmulviz
