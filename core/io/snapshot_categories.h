#pragma once
// matmulviz's memory categories (core/memory/memory_category.h) for the blocks of a PyTorch
// memory snapshot, derived from their stack frames where the frames allow it. Qt-free.
//
// A snapshot records where each block was allocated, not what it holds, so only what a frame
// says is used. The rules, tried in this order; the first that a frame of the stack matches
// gives the category; a stack no rule matches stays "other":
//   gradients      the autograd engine ran the allocation: a C++ frame of torch::autograd::Engine
//                  (the engine's threads run backward) or of torch::autograd::generated (a
//                  generated backward node, e.g. BmmBackward0::apply); a Python frame of
//                  torch/autograd/__init__.py backward or grad, of torch/autograd/graph.py
//                  _engine_run_backward, or any frame named "backward" (Tensor.backward, a
//                  custom autograd.Function's backward)
//   other          an optimizer's step or state: a frame in torch/optim/ (not one of ours)
//   gathered copy  the innermost dispatcher frame (at::_ops::<op>::...) is a gather: index
//                  (a[q]; index_Tensor), index_select, gather or embedding; its result
//   outputs        the innermost dispatcher frame is a matrix multiplication: mm, bmm, matmul,
//                  addmm, baddbmm, addbmm, linear or einsum; the block is its result
// "inputs" and "saved for backward" are never derived: no frame tells a copy of the input, or a
// tensor that autograd will keep, from any other block. The innermost dispatcher frame names the
// op that asked for the block (PyTorch's stacks hold at::_ops::<op>::call for every op called
// through the dispatcher), so an op that calls another (matmul calls bmm) counts as the inner;
// factories that only make the memory an op asked for (empty*, new_empty*, zeros*, resize_)
// are skipped, and an op's inner copy (matmul's clone of a non-contiguous input) stays other.

#include "core/io/memory_snapshot.h"
#include "core/memory/memory_category.h"

#include <string>
#include <vector>

namespace matmulviz::snapshot {

/// The category of the block allocated with stack `stack` (an index of snapshot.stacks; an
/// unknown index gives "other"), by the rules above.
MemoryCategory categoryOfStack(const MemorySnapshot& snapshot, StackId stack);

/// The rule that gave the category, in words ("a frame in torch/optim/"); empty for none.
std::string categoryReason(const MemorySnapshot& snapshot, StackId stack);

/// The categories of every stack, indexed by StackId (one pass over the stacks).
std::vector<MemoryCategory> categoriesOfStacks(const MemorySnapshot& snapshot);

/// The rules above as short lines, for hover texts and documentation.
std::string categoryRulesText();

}  // namespace matmulviz::snapshot
