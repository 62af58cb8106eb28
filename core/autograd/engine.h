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

#include <vector>

namespace matmulviz {

/// `retainGraph` (retain_graph=True) keeps every node's saved tensors for a later pass; without
/// it a second pass through a node whose saved tensors were freed throws std::logic_error with
/// PyTorch's "Trying to backward through the graph a second time" message.
void runBackward(const Tensor& root, const Tensor& gradOutput, bool retainGraph = false);

/// Whether the backward pass running on this thread keeps the graph (its retain_graph); true
/// outside any pass. PyTorch's torch._C._autograd._get_current_graph_task_keep_graph, which
/// AOTAutograd's compiled backward reads to free its saved tensors as soon as it has them.
bool currentPassKeepsGraph();

/// torch.autograd.grad(root, inputs, gradOutput): the gradients of `root` with respect to each
/// of `inputs` (undefined where an input does not reach the root), without writing any .grad.
/// Leaves' AccumulateGrad nodes do not run. Errors as runBackward; std::logic_error when an input
/// does not require grad ("One of the differentiated Tensors does not require grad").
std::vector<Tensor> runGrad(const Tensor& root, const Tensor& gradOutput,
                            const std::vector<Tensor>& inputs, bool retainGraph = false);

}  // namespace matmulviz
