#pragma once
// The engine's differentiable ops, named and behaving as PyTorch's (ATen) ops. Views share the
// input's storage and allocate nothing; copies allocate through the device's allocator model.
// Every op records an autograd node when grad mode is on and an input requires grad.
// Shapes are row-major; dims may be negative (counted from the end). Errors are exceptions
// with PyTorch's wording where it has one (std::invalid_argument for bad shapes/arguments,
// std::out_of_range for bad dims or indices, OutOfMemoryError from the allocator).

#include "core/tensor/tensor.h"

#include <optional>
#include <vector>

namespace matmulviz {

// ---- views (aten/src/ATen/native/TensorShape.cpp) ----
/// t[..., start:end:step, ...] along `dim`; start/end are clamped like Python slices.
Tensor slice(const Tensor& t, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
/// torch.narrow(t, dim, start, length).
Tensor narrow(const Tensor& t, int64_t dim, int64_t start, int64_t length);
/// t.select(dim, index): drops `dim`; negative index counts from the end.
Tensor select(const Tensor& t, int64_t dim, int64_t index);
/// t.view(sizes) (one size may be -1). Throws when the strides do not allow a view, with
/// PyTorch's message ("view size is not compatible with input tensor's size and stride...").
Tensor view(const Tensor& t, Shape sizes);
/// t.reshape(sizes) as PyTorch 1.13's (TensorShape.cpp: reshape_symint): a view when the strides
/// allow it (at::_reshape_alias, node ReshapeAliasBackward0), else a contiguous clone then
/// at::_unsafe_view (CloneBackward0, then UnsafeViewBackward0).
Tensor reshape(const Tensor& t, Shape sizes);
Tensor permute(const Tensor& t, const std::vector<int64_t>& dims);
Tensor transpose(const Tensor& t, int64_t dim0, int64_t dim1);
/// t.expand(sizes): broadcasts size-1 dims with stride 0; -1 keeps a size.
Tensor expand(const Tensor& t, Shape sizes);
Tensor unsqueeze(const Tensor& t, int64_t dim);
/// t.squeeze(dim): a new view, without `dim` when its size is 1, else of the same geometry
/// (TensorShape.cpp: squeeze returns self.as_strided(...) either way). SqueezeBackward1.
Tensor squeeze(const Tensor& t, int64_t dim);
/// t.squeeze(): one view without every size-1 dim. SqueezeBackward0 (derivatives.yaml's
/// squeeze(Tensor self)).
Tensor squeeze(const Tensor& t);
/// at::squeeze_(t, dim) on a result nothing else refers to (matmul's 1-d @ 2-d:
/// `tensor1.unsqueeze(0).mm(tensor2).squeeze_(0)` in LinearAlgebra.cpp): the view of
/// squeeze(t, dim), its node named SqueezeBackward3 (derivatives.yaml's squeeze_.dim).
Tensor squeezeResult(const Tensor& t, int64_t dim);
/// t.t() (at::t): a <= 2-d tensor with its dims reversed, a view. TBackward0. Throws
/// std::invalid_argument "t() expects a tensor with <= 2 dimensions, but self is 3D".
Tensor tMatrix(const Tensor& t);
/// t.split(size, dim) (TensorShape.cpp: split): views of `size` along dim, the last one shorter,
/// all outputs (output_nr 0..n-1) of one SplitBackward0 node; at least one piece.
std::vector<Tensor> split(const Tensor& t, int64_t size, int64_t dim);
/// t.split([sizes], dim) (split_with_sizes): one SplitWithSizesBackward0 node.
std::vector<Tensor> splitWithSizes(const Tensor& t, const std::vector<int64_t>& sizes, int64_t dim);
/// t.chunk(chunks, dim) (TensorShape.cpp: chunk): split by ceil(size / chunks), or
/// split_with_sizes of zeros for an empty dim.
std::vector<Tensor> chunk(const Tensor& t, int64_t chunks, int64_t dim);

// ---- copies ----
/// c10::MemoryFormat, the two the engine knows (no channels-last).
enum class MemoryFormat { Preserve, Contiguous };
/// t itself when contiguous, else a contiguous copy (CloneBackward0).
Tensor contiguous(const Tensor& t);
/// A copy (torch.clone, CloneBackward0). MemoryFormat::Preserve (PyTorch's default,
/// TensorFactories.cpp: clone) keeps t's strides when t is non-overlapping and dense (a
/// transposed or permuted contiguous tensor), else takes dense strides in t's dim order
/// (empty_like: infer_dense_strides; contiguous for a contiguous-ordered t such as a slice);
/// Contiguous is always contiguous. Allocates t.numel() elements either way.
Tensor clone(const Tensor& t, MemoryFormat format = MemoryFormat::Preserve);
/// dst[...] = src[...] (same shape; dtype converted). Not differentiable (in-place, no graph).
void copyInto(const Tensor& dst, const Tensor& src);
/// Moves a tensor to a device (host when null): torch.Tensor.to(device). Differentiable.
Tensor toDevice(const Tensor& t, const DevicePtr& device, const std::string& label);
/// t itself when the host can read its memory (host, cpu), else a host copy of it (a device
/// with its own memory: cudaMemcpy), labelled `label`. Builds no graph. For host-side checks
/// and reports that read values (index bounds, the importance mask, errors against a reference).
Tensor hostReadable(const Tensor& t, const std::string& label);
/// A copy converted to `dtype` on the same device. Differentiable (ToCopyBackward0) to a floating
/// dtype; an int64 or bool result is outside the graph, as in PyTorch.
Tensor toDType(const Tensor& t, DType dtype);

/// Advanced indexing along dim 0: t[index], `index` an int64 tensor of any shape with >= 1 dim
/// (a copy of shape index.sizes + t.sizes[1:]), or 0-dim (a view: t.select(0, index)).
/// A host index used on a device tensor is copied to the device for the gather and freed right
/// after (aten/src/ATen/native/TensorAdvancedIndexing.cpp, index -> TensorIterator).
/// Throws std::out_of_range naming the offending index ("index 2048 is out of bounds for
/// dimension 0 with size 2048").
Tensor index(const Tensor& t, const Tensor& indices);
/// torch.nonzero(t): the indices of t's non-zero elements (NaN counts), int64 [n, t.dim()] in
/// row-major order, on t's device (computed on the host, moved in one transfer to a device with
/// its own memory). Throws std::invalid_argument for a tensor without data (meta): n depends on
/// the values.
Tensor nonzero(const Tensor& t);
/// Boolean-mask indexing t[mask]: `mask` bool of t's leading shape (1 <= mask.dim() <= t.dim()),
/// the result a copy [n, t.sizes[mask.dim():]...] of the sub-tensors where mask is true, in
/// row-major order. As at::index: the mask is expanded with nonzero (an int64 [n, k] tensor on
/// the mask's device, copied column by column to t's device for a host mask), which lives only
/// during the op; then the output is allocated. IndexBackward0 saves the mask. Throws
/// std::out_of_range with PyTorch's text for a mask whose shape does not match ("The shape of
/// the mask [2] at index 0 does not match the shape of the indexed tensor [3, 4] at index 0"),
/// std::invalid_argument for a mask that is not bool or 0-dim, or without data (meta: the
/// result's size is data-dependent), and on a device with its own memory for a mask of more
/// than one dim.
Tensor indexWithMask(const Tensor& t, const Tensor& mask);
/// t[mask] = values in place (index_put_ with a bool mask, accumulate=False; not
/// differentiable). A one-element host `values` with the mask on t's device is PyTorch's
/// masked_fill_ path: nothing is allocated (converted to t's dtype; nothing to do on meta). Another
/// `values` must have t's dtype (PyTorch's "Index put requires the source and destination dtypes
/// match, got Float for the destination and Double for the source.") and broadcast to [n,
/// t.sizes[k:]...] ("shape mismatch: value tensor of shape [2] cannot be broadcast to indexing
/// result of shape [3]"); the mask is then expanded with nonzero as in indexWithMask. Mask checks
/// as indexWithMask's. Throws std::invalid_argument on a device with its own memory.
void indexPutWithMask(const Tensor& t, const Tensor& mask, const Tensor& values);
/// t[:, ..., indices] with one int64 index tensor at `dim` (>= 1 dim): the dims of t before
/// `dim`, the index's, then t's after it, laid out as PyTorch's index kernel (TensorIterator)
/// lays out its output (aten/src/ATen/native/TensorAdvancedIndexing.cpp): for a contiguous t
/// and index, contiguous. index(t, indices) for dim 0 or a 0-dim index. On a device with its own
/// compute backend the gather's output is contiguous in [index dims, other dims] order.
Tensor indexDim(const Tensor& t, int64_t dim, const Tensor& indices);
/// at::index(t, indices) with an index list: indices[d] (int64, any shape) indexes t's dim d,
/// nullopt leaves it whole. The index tensors broadcast together (else std::out_of_range
/// "shape mismatch: indexing tensors could not be broadcast together with shapes [2], [3]");
/// the result's dims are t's before the first indexed dim, the broadcast shape, then t's after
/// the last one when the indexed dims are adjacent, else (PyTorch's transposeToFront) the
/// broadcast shape first, then t's dims not indexed. One new tensor, laid out as TensorIterator
/// lays it out; host indices on a device tensor are copied to the device for the op and freed
/// after it. IndexBackward0 saves the index tensors (one "indices" slot each); its backward is
/// index_put_ with accumulate=True into zeros of t's shape. Bounds errors as index()'s. Throws
/// NotSupportedError (core/ops/pointwise.h) on a device with its own compute backend (indexPut
/// too).
Tensor indexTensors(const Tensor& t, const std::vector<std::optional<Tensor>>& indices);
/// t[indices] = values in place (index_put_, accumulate=False): indices as indexTensors',
/// `values` of t's dtype broadcast to the indexing result's shape (PyTorch's "shape mismatch:
/// value tensor of shape [2] cannot be broadcast to indexing result of shape [3]"). Allocates
/// nothing but the device copies of host indices, for the op's duration. With duplicate indices
/// the last write wins. When grad mode is on and t or values requires grad, t's grad_fn becomes
/// IndexPutBackward0 (saves the index list; t's previous history gets the gradient zeroed where
/// written, values the gradient there summed to their shape); a leaf t that requires grad and a
/// view of a tensor that requires grad are refused as in copyIntoRecorded.
void indexPut(const Tensor& t, const std::vector<std::optional<Tensor>>& indices,
              const Tensor& values);
/// view.copy_(src) (src broadcast to view's shape) where `view` is a view of `base`'s memory,
/// as Tensor.__setitem__ does it. When grad mode is on and base or src requires grad, base's
/// grad_fn becomes CopySlices (torch/csrc/autograd/functions/tensor.cpp): its backward gives
/// base's previous history the gradient with the overwritten part zeroed, and src the gradient
/// of that part (a src of another shape is expanded first, its gradient through ExpandBackward0).
/// Throws std::logic_error for a leaf base that requires grad, NotSupportedError
/// (core/ops/pointwise.h) for a base that is itself a view of a tensor that requires grad (its
/// grad_fn a view node: the engine keeps no view base to move the CopySlices to). The engine
/// keeps no version counters: base saved for backward before the assignment (y = x.exp();
/// y[0] = 0) is not detected, where PyTorch's backward raises "one of the variables needed for
/// gradient computation has been modified by an inplace operation".
void copyIntoRecorded(const Tensor& base, const Tensor& view, const Tensor& src);

// ---- arithmetic ----
Tensor add(const Tensor& a, const Tensor& b);
/// a += b in place (same shape, no autograd: used for gradient accumulation).
void addInPlace(const Tensor& a, const Tensor& b);
/// Sum of all elements (0-dim result): float dtypes keep theirs (accumulated in float64,
/// rounded once); an int64 or bool tensor sums exactly to int64 (ReduceOps.cpp: integral inputs
/// give int64).
Tensor sum(const Tensor& t);
/// Sums `t` down to `sizes` over broadcast dims (at::sum_to); an int64 or bool `t` into a new
/// int64 tensor (also when the sizes are t's).
Tensor sumTo(const Tensor& t, const Shape& sizes);

// ---- matrix products (aten/src/ATen/native/LinearAlgebra.cpp) ----
/// [n, m] @ [m, p] -> [n, p]. Saves mat2 iff self requires grad, self iff mat2 does.
Tensor mm(const Tensor& self, const Tensor& mat2);
/// [b, n, m] @ [b, m, p] -> [b, n, p]. Same saving rule.
Tensor bmm(const Tensor& self, const Tensor& mat2);
/// torch.matmul: dot/mv/mm for 1-2 dims, folding of the larger operand into mm when
/// should_fold() says so, else broadcast batch dims, expand + reshape to 3-d and bmm.
Tensor matmul(const Tensor& a, const Tensor& b);

/// torch.cat(tensors, dim): one new tensor of the promoted dtype (at::native::result_type:
/// float16 with float32 gives float32, int64 with float32 float32); CatBackward0 saves no
/// tensors, only sizes (and dtypes, to cast each input's gradient back).
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim);

/// The fused gathered batched matmul: out[n] = a[n] @ c[q[n]], a [N, I, J], c [M, J, K],
/// q [N] int64 (host), out [N, I, K], without materialising c[q]. Backward:
/// dA[n] = dO[n] @ c[q[n]]^T, dC[m] = sum over n with q[n] = m of a[n]^T @ dO[n].
/// Saves references to a, c and q only (no new memory). Device memory: q's device copy
/// (N x 8 bytes) during each pass, the output, kernel 08's buckets during the forward when it
/// applies ((3M + 1 + N) x 4 bytes: core/ops/grouped_bmm_rule.h), and in backward dA and dC.
Tensor gatherBmm(const Tensor& a, const Tensor& c, const Tensor& q);

}  // namespace matmulviz

namespace matmulviz {
/// at::_unsafe_view: view() whose backward node is UnsafeViewBackward0 (used inside matmul).
Tensor unsafeView(const Tensor& t, Shape sizes);
/// The last two dims swapped (Tensor.mT).
Tensor mT(const Tensor& t);
}  // namespace matmulviz

namespace matmulviz {
// ---- added for einsum (the fast.ai lesson): core/ops/mul.cpp, sum_dims.cpp, diagonal.cpp ----
/// a * b with broadcasting (at::mul; shapes as at::infer_size), same device; the dtype is
/// resultType(a, b) (pointwise.h: float16 * float32 gives float32, int64 * int64 int64).
/// MulBackward0 saves b iff a requires grad and a iff b does (tools/autograd/derivatives.yaml).
/// Throws std::invalid_argument for shapes that do not broadcast (PyTorch's message).
Tensor mul(const Tensor& a, const Tensor& b);
/// t.sum(dims, keepdim): sums over `dims` (negative allowed, each once); a new tensor, also when
/// every summed dim has size 1. Accumulates in float64, rounds once (float16/bfloat16 as
/// PyTorch, which accumulates in float32); an int64 or bool tensor sums exactly into int64.
/// Backward (SumBackward1) expands the gradient.
/// Throws std::out_of_range for a bad dim, std::invalid_argument for a repeated one.
Tensor sumDims(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim);
/// t.diagonal(0, dim1, dim2): a view that drops dim1 and dim2 and appends their diagonal
/// (size min of the two, stride the sum of theirs). DiagonalBackward0 writes the gradient
/// into zeros of t's shape. Throws std::out_of_range / std::invalid_argument (dim1 == dim2).
Tensor diagonal(const Tensor& t, int64_t dim1, int64_t dim2);
}  // namespace matmulviz
