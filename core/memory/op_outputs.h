#pragma once
// How a CUDA kernel makes its outputs where a meta kernel (torch/_meta_registrations.py, the
// PyTorch adapter's way of learning an op's output sizes) describes them otherwise: outputs the
// kernel makes on the host take no block of the caching allocator, and the kernel may allocate
// its outputs in another order than it returns them, which moves their blocks.

#include <string_view>
#include <vector>

namespace matmulviz {

/// The positions, among the outputs of aten op `op` (its overload packet name, as
/// "_scaled_dot_product_efficient_attention"), of the outputs PyTorch's CUDA kernel makes on
/// the host outside CUDA graph capture: the memory-efficient attention's philox seed and offset,
/// 0-dim int64 CPU tensors (aten/src/ATen/native/transformers/cuda/attention.cu,
/// _efficient_attention_forward: at::empty({}, at::dtype(at::kLong)), or at::scalar_tensor with
/// dropout; measured: the H200's transformer snapshot allocates none). Empty for other ops.
std::vector<int> hostOutputPositions(std::string_view op);

/// The positions of `op`'s outputs in the order its CUDA kernel allocates them, where that is
/// not the order it returns them; empty otherwise. native_dropout: the mask, then the output
/// (aten/src/ATen/native/cuda/Dropout.cu, dropout_cuda; measured in the H200's transformer
/// snapshot).
std::vector<int> outputAllocationOrder(std::string_view op);

}  // namespace matmulviz
