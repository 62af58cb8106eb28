#pragma once
// matmulviz's memory categories (core/memory/memory_category.h) for the blocks of a PyTorch
// memory snapshot, from their stack frames and their lifetimes. Qt-free.
//
// A snapshot records where each block was allocated and freed, not what it holds, so only what
// the frames and the order of events say is used. PyTorch's own memory profiler
// (torch/profiler/_memory_profiler.py) names the categories used here for a training step
// (parameter, optimizer state, input, activation, gradient, temporary, autograd detail); it
// decides them from the data flow between ops, which a snapshot does not hold, so the rules
// below are the nearest that frames allow, each named on screen with the block.
//
// The rules, tried in this order; the first that matches gives the category:
//  From the allocation's frames (any stack):
//   cuBLAS workspace   a frame of cuBLAS's handle setup (at::cuda::setWorkspaceForHandle,
//                      getCUDABlasLtWorkspace): the workspace a handle takes on first use
//   gradients          a frame of the autograd engine (torch::autograd::Engine), of a generated
//                      backward node (torch::autograd::generated), or a Python frame of
//                      torch.autograd.backward/grad, _engine_run_backward, or named backward
//   optimizer state    a frame in torch/optim/ named _init_group (an optimizer making its state
//                      on its first step)
//   temporary          a frame in torch/optim/, freed under a frame in torch/optim/ (working
//                      memory of an optimizer step)
//   optimizer state    any other frame in torch/optim/ (made by a step, kept after it)
//   parameter          a frame of Module._apply (torch/nn/modules/module.py: .to(), .cuda()
//                      moving parameters and buffers), or a module's __init__ or
//                      reset_parameters in torch/nn/modules/
//   gathered copy      the innermost dispatcher op (at::_ops::<op>) is a gather: index,
//                      index_Tensor, index_select, gather or embedding; its result
//   outputs            the innermost dispatcher op is a matrix multiplication: mm, bmm, matmul,
//                      addmm, baddbmm, addbmm, linear or einsum
//  From the thread, in a snapshot of Python stacks only (the autograd engine runs backward on
//  its own threads, which have no Python frame, so its allocations carry no frame at all):
//   cuBLAS workspace   a block of exactly 32 MiB alive at the end, the first of that size in its
//                      thread (PyTorch 2.x's cuBLAS workspace on sm_90, as measured on an H200;
//                      Python stacks do not show cuBLAS's frames, so this one is by size)
//   autograd detail    no frame, freed by a free without frames: made and freed by the backward
//   gradients          no frame, kept after the backward (freed by Python code such as
//                      zero_grad, or alive at the end): a parameter's .grad
//  From the lifetime, for blocks with Python frames in such a snapshot:
//   activation         freed by the autograd engine (a free without frames): saved for backward
//   temporary          freed in the function that made it (the free's innermost frame is the
//                      allocation's innermost function)
//   inputs             no frame in torch/: made by the program's own line (a batch, a target)
//   activation         any other block made under torch's Python code (the forward) and kept
//                      past the function that made it
// Anything else is "other". Blocks alive before the recording started have no lifetime in the
// trace: only the frame rules apply to them. An op that calls another (matmul calls bmm)
// counts as the inner; factories that only make the memory an op asked for (empty*,
// new_empty*, zeros*, resize_) are skipped, and an op's inner copy (matmul's clone of a
// non-contiguous input) stays other. "saved for backward" is never derived (no frame tells a
// tensor autograd keeps from another); activation is the nearest.

#include "core/io/memory_snapshot.h"
#include "core/memory/memory_category.h"

#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

namespace matmulviz::snapshot {

/// One block's life in a device's trace: what the rules look at. Bytes; events are indices in
/// the device's trace.
struct BlockLife {
  StackId stack = 0;        ///< the stack of its allocation
  int64_t size = 0;         ///< bytes
  int64_t allocEvent = -1;  ///< its 'alloc'; -1: allocated before the recording started
  int64_t freeEvent = -1;   ///< the entry that ended it; -1: alive at the end of the trace
};

/// A category and the rule that gave it, in words ("a frame in torch/optim/ named
/// _init_group: ..."); the rule is empty when none matched (the category is then "other").
struct CategoryChoice {
  MemoryCategory category = MemoryCategory::Other;
  std::string rule;
};

/// The rules above for the blocks of one device of one snapshot (which is kept by reference).
/// Construction looks at every frame and the device's trace once: O(frames + trace entries).
class BlockCategorizer {
 public:
  BlockCategorizer(const MemorySnapshot& snapshot, size_t device);
  /// The category of `block` and its rule. Never throws.
  CategoryChoice categorize(const BlockLife& block) const;
  /// True when no frame of the snapshot is a C++ frame and some frame exists: the thread and
  /// lifetime rules apply.
  bool pythonStacksOnly() const { return pythonOnly_; }

 private:
  const MemorySnapshot& s_;
  const DeviceTrace* trace_ = nullptr;
  bool pythonOnly_ = false;
  std::unordered_set<int64_t> workspaceAllocs_;  ///< trace entries of the 32 MiB rule
};

/// The category of a block allocated with stack `stack` by the frame rules only (an unknown
/// index gives "other").
MemoryCategory categoryOfStack(const MemorySnapshot& snapshot, StackId stack);

/// The frame rule that gave categoryOfStack, in words; empty for none.
std::string categoryReason(const MemorySnapshot& snapshot, StackId stack);

/// categoryOfStack of every stack, indexed by StackId (one pass over the stacks).
std::vector<MemoryCategory> categoriesOfStacks(const MemorySnapshot& snapshot);

/// The rules above as short lines, for hover texts and documentation.
std::string categoryRulesText();

}  // namespace matmulviz::snapshot
