#pragma once
// What an allocation holds, as the Memory view stacks it: set by the engine where it allocates
// (issue 15, "typed messages"), carried by each AllocationRecord, read by the views. Nothing
// recovers it from a label.
//
// Who sets which:
//   inputs              the runner's device copies of a and c (runMultihead's A1, P, W1); the
//                       index copied to the device
//   gathered copy       the strategies' c[q] and c[q[i*b:i*b+b]], multihead's A3 = A1[mask]
//   outputs             the strategies' per-row and per-batch results, out, multihead's O3
//   saved for backward  at the end of the statement (the runner; runMultihead after the
//                       forward), a live block that autograd holds (a SavedTensor registered
//                       on its storage) and the caller does not
//   gradients           grad_output and everything autograd's backward allocates (its ops'
//                       results, zeros, sums, .grad)
//   other               anything else (clones, staging copies, sums): the default
//   cuBLAS workspace    the workspace PyTorch 2.x allocates through the caching allocator for each
//                       thread's cuBLAS handle on its first use (one per thread and stream;
//                       aten/src/ATen/cuda/CublasHandlePool.cpp), kept for the life of the
//                       process (the engine's rule: core/memory/cublas_workspace.h)
// The categories of PyTorch's own memory profiler (torch/profiler/_memory_profiler.py, Category),
// given to the blocks of a PyTorch memory snapshot by core/io/snapshot_categories.h (inputs and
// gradients above are its INPUT and GRADIENT):
//   parameter           a module's parameters (and buffers)
//   optimizer state     what an optimizer keeps between steps (Adam's exp_avg, exp_avg_sq)
//   activation          made by the forward pass and kept for the backward or past its op
//   temporary           made and freed within one op or function
//   autograd detail     made by the backward pass that is not a gradient (its intermediates)

#include <cstdint>
#include <optional>
#include <string_view>

namespace matmulviz {

enum class MemoryCategory : uint8_t {
  Inputs,
  GatheredCopy,
  Outputs,
  SavedForBackward,
  Gradients,
  Other,
  CublasWorkspace,
  Parameter,
  OptimizerState,
  Activation,
  Temporary,
  AutogradDetail,
};
constexpr int kMemoryCategoryCount = 12;

/// "inputs", "gathered copy", "outputs", "saved for backward", "gradients", "other",
/// "cuBLAS workspace", "parameter", "optimizer state", "activation", "temporary",
/// "autograd detail".
constexpr std::string_view memoryCategoryName(MemoryCategory c) {
  switch (c) {
    case MemoryCategory::Inputs:
      return "inputs";
    case MemoryCategory::GatheredCopy:
      return "gathered copy";
    case MemoryCategory::Outputs:
      return "outputs";
    case MemoryCategory::SavedForBackward:
      return "saved for backward";
    case MemoryCategory::Gradients:
      return "gradients";
    case MemoryCategory::Other:
      return "other";
    case MemoryCategory::CublasWorkspace:
      return "cuBLAS workspace";
    case MemoryCategory::Parameter:
      return "parameter";
    case MemoryCategory::OptimizerState:
      return "optimizer state";
    case MemoryCategory::Activation:
      return "activation";
    case MemoryCategory::Temporary:
      return "temporary";
    case MemoryCategory::AutogradDetail:
      return "autograd detail";
  }
  return "other";
}

/// The category named `name` (as memoryCategoryName spells it); nullopt for any other text.
constexpr std::optional<MemoryCategory> memoryCategoryFromName(std::string_view name) {
  for (int c = 0; c < kMemoryCategoryCount; ++c)
    if (memoryCategoryName(MemoryCategory(c)) == name) return MemoryCategory(c);
  return std::nullopt;
}

}  // namespace matmulviz
