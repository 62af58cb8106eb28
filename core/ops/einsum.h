#pragma once
// torch.einsum on the engine (aten/src/ATen/native/Linear.cpp: einsum, sumproduct_pair), so
// that its memory is PyTorch's: operands are aligned with views (diagonal, unsqueeze,
// permute), contracted left to right in pairs, each pair through permute + reshape (a copy
// when the strides do not allow a view) + one bmm, or a broadcast mul when nothing is summed.

#include "core/tensor/tensor.h"

#include <string>
#include <vector>

namespace matmulviz {

/// einsum(equation, operands), as torch.einsum accepts it:
/// - labels [a-zA-Z], spaces ignored; ',' between operands; optional "->" and output.
/// - explicit output ("ik,kj->ij", "ik,kj->ikj", "bsnd,nde->bsne", "ij->" for a full sum);
///   implicit output (no "->"): the ellipsis dims, then the labels seen exactly once, in
///   order A..Z then a..z.
/// - a label repeated in one operand takes the diagonal ("ii->i", "ii" = trace).
/// - "..." covers leading dims that broadcast across operands (size 1 against size n).
/// - labels missing from the output are summed.
/// Shapes: each operand has as many dims as labels (more with an ellipsis); sizes of a label
/// agree or are 1 (broadcast). Result dtype and device of the operands (all the same).
/// Differentiable (through the ops it is made of). Accumulation in float32 for 16-bit types.
/// Throws std::invalid_argument with PyTorch's messages ("einsum(): subscript k has size 4 for
/// operand 1 which does not broadcast with previously seen size 3", "einsum(): fewer operands
/// were provided than specified in the equation", ...), or for differing dtypes/devices.
Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands);

}  // namespace matmulviz
