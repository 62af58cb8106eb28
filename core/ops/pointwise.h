#pragma once
// Pointwise arithmetic, the unary functions, softmax, topk, mean and stack, named and behaving as
// PyTorch 1.13's ops (ATen), with its autograd nodes (tools/autograd/derivatives.yaml).
//
// Memory: every op allocates exactly its output(s) through the device's allocator model, as
// PyTorch's CUDA kernels do (TensorIterator converts dtypes and broadcasts on the fly, with no
// temporary). Backward formulas allocate what PyTorch's do (e.g. CosBackward0: sin, neg, mul).
// Compute: on the host (host tensors and host-backed devices). A tensor on a device with its own
// compute backend (Tensor::compute() non-null) throws NotSupportedError for ops without a
// backend primitive. On meta (no data) the ops allocate and build the graph, computing nothing.
// Dtypes: float32/float64/float16/bfloat16 and int64 as stated per op; results follow
// at::result_type (c10/core/ScalarType.h, aten/src/ATen/native/TypeProperties.cpp).

#include "core/tensor/tensor.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace matmulviz {

/// An op without a primitive on a tensor's compute backend (a real or simulated CUDA device):
/// the message names the op and the backend. Python raises it as NotImplementedError.
class NotSupportedError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

/// A Python number operand (c10::Scalar). `integral` for int and bool: an int64 tensor stays
/// int64 with an integral scalar and becomes float32 (the default dtype) with a float one.
struct Scalar {
  double value = 0;
  bool integral = false;
};

/// c10::promoteTypes: the same dtype, or the one of the higher category (bool < int64 < float),
/// or the wider float (float16 with bfloat16 gives float32).
DType promoteTypes(DType a, DType b);
/// at::result_type of two tensors: tensors with dims outrank 0-dim tensors, which count only
/// when of a higher category (float over int); within a category the wider type wins
/// (float16 with bfloat16 gives float32).
DType resultType(const Tensor& a, const Tensor& b);
/// at::result_type of a tensor and a Python number (a wrapped number: a float one counts as
/// float32, the default dtype, and only when the tensor is int64).
DType resultType(const Tensor& t, Scalar s);

// ---- binary, broadcasting (aten/src/ATen/native/BinaryOps.cpp) ----
// Shapes broadcast as at::infer_size (std::invalid_argument "The size of tensor a (3) must match
// the size of tensor b (4) at non-singleton dimension 1"); the dtype is resultType(a, b); both
// on one device (a 0-dim host tensor may join a device tensor, as a CPU scalar tensor may in
// PyTorch). Backward reduces each gradient to its input's shape (at::sum_to) and dtype.

// add(a, b) is declared in ops.h (a + b, AddBackward0, saves nothing).

/// a - b (at::sub, alpha 1). SubBackward0 saves nothing (other's gradient is -grad).
Tensor sub(const Tensor& a, const Tensor& b);
/// a / b, true division (at::div): int64 operands give float32. DivBackward0 saves other when
/// either input requires grad and self when other does (grad / other;
/// -grad * ((self / other) / other)).
Tensor div(const Tensor& a, const Tensor& b);
/// torch.ops.prims.fma(a, b, c) (torch/_inductor/inductor_prims.py): a * b + c in one new tensor
/// of a * b's broadcast shape and dtype (c broadcasts to it and has that dtype, else
/// std::invalid_argument), as inductor's decomposition of _softmax_backward_data uses it. No
/// autograd node.
Tensor fma(const Tensor& a, const Tensor& b, const Tensor& c);

// ---- with a Python number (the scalar is a wrapped 0-dim tensor in PyTorch 1.13, so the nodes
// are the tensor-tensor ones, with no edge for the scalar) ----
/// t + s: AddBackward0. int64 t stays int64 for an integral s.
Tensor addScalar(const Tensor& t, Scalar s);
/// t - s: SubBackward0.
Tensor subScalar(const Tensor& t, Scalar s);
/// s - t (at::rsub with a Scalar): RsubBackward1, saves nothing.
Tensor rsubScalar(const Tensor& t, Scalar s);
/// t * s: MulBackward0, saves the wrapped scalar as "other" (a 0-dim host tensor, int64 or
/// float64 as PyTorch wraps it) when t requires grad.
Tensor mulScalar(const Tensor& t, Scalar s);
/// t / s (true division: int64 t gives float32): DivBackward0, saves the scalar as "other".
Tensor divScalar(const Tensor& t, Scalar s);
/// s / t as torch.Tensor.__rtruediv__ computes it: t.reciprocal() * s, so ReciprocalBackward0
/// (saves result) then MulBackward0; two allocations, the first freed at once without grad.
Tensor rdivScalar(const Tensor& t, Scalar s);
/// 1 / t (at::reciprocal; int64 gives float32). ReciprocalBackward0 saves result
/// (-grad * (result * result)).
Tensor reciprocal(const Tensor& t);

// ---- unary (aten/src/ATen/native/UnaryOps.cpp, Activation.cpp) ----
/// -t, same dtype. NegBackward0. Throws std::invalid_argument for a bool tensor (PyTorch's text).
Tensor neg(const Tensor& t);
/// cos(t); int64 gives float32. CosBackward0 saves self (grad * -self.sin()).
Tensor cos(const Tensor& t);
/// sin(t); int64 gives float32. SinBackward0 saves self (grad * self.cos()).
Tensor sin(const Tensor& t);
/// exp(t); int64 gives float32. ExpBackward0 saves result (grad * result).
Tensor exp(const Tensor& t);
/// max(t, 0), same dtype (int64 stays int64). ReluBackward0 saves result
/// (threshold_backward(grad, result, 0): one allocation).
Tensor relu(const Tensor& t);
/// aten threshold_backward(grad, result, 0), relu's backward (tools/autograd/derivatives.yaml):
/// `grad` where `result` > 0, else 0; same shape as grad (result of the same shape), one
/// allocation of grad's dtype, no autograd node. For graphs that run relu's backward as an op.
Tensor thresholdBackward(const Tensor& grad, const Tensor& result);

/// torch.softmax(t, dim) over one dim (aten/src/ATen/native/SoftMax.cpp), float dtypes only
/// (int64 throws, as PyTorch's kernel has no Long version: pass dtype=). Max-subtracted, in
/// float64, rounded once. SoftmaxBackward0 saves result; its backward allocates only the input's
/// gradient. Throws std::out_of_range for a bad dim.
Tensor softmax(const Tensor& t, int64_t dim);
/// aten.amax(t, [dim], keepdim) (aten/src/ATen/native/ReduceOps.cpp) over one dim of a float
/// tensor with at least one dim: the largest value of each slice (NaN if the slice has one),
/// one new contiguous tensor of t's sizes with dim removed (size 1 with keepdim). No autograd
/// node: it is the first op of softmax's decomposition (torch/_decomp/decompositions.py:
/// _softmax) in compiled joint graphs, whose backward reads only the softmax's result. Throws
/// std::invalid_argument for an integer dtype or an empty dim, std::out_of_range for a bad dim.
Tensor amax(const Tensor& t, int64_t dim, bool keepdim);

/// torch.topk(t, k, dim, largest, sorted) (aten/src/ATen/native/TopKImpl.h): (values, indices)
/// of size k along dim, indices int64; ties keep the lower index first; the result is always
/// sorted (PyTorch allows any order for sorted=False). TopkBackward0 saves indices; its backward
/// scatters the gradient into zeros of t's shape (one allocation). Throws std::invalid_argument
/// "selected index k out of range" for k < 0 or k > size, std::out_of_range for a bad dim.
std::pair<Tensor, Tensor> topk(const Tensor& t, int64_t k, int64_t dim, bool largest = true,
                               bool sorted = true);

/// t.mean(): the mean of all elements, a 0-dim tensor (aten/src/ATen/native/ReduceOps.cpp; on
/// CUDA one reduction kernel writing only the output). Accumulates in float64, rounds once;
/// empty gives NaN. Float dtypes only: int64 throws std::invalid_argument with PyTorch's text
/// ("mean(): could not infer output dtype. ..."). MeanBackward0 saves no tensor; its backward is
/// grad.expand(sizes) / numel (one allocation).
Tensor mean(const Tensor& t);
/// t.mean(dims, keepdim) over `dims` (negative allowed, each once; empty means all dims).
/// MeanBackward1 (sum_backward(grad) / n). Errors as mean() and sumDims().
Tensor meanDims(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim);

/// torch.stack(tensors, dim) (aten/src/ATen/native/TensorShape.cpp): one new tensor with a new
/// dim of size tensors.size() at `dim` (in [-(n+1), n]); dtypes promote as torch.cat's.
/// StackBackward0 saves no tensors; its backward hands each input a select() view of the
/// gradient. Throws std::invalid_argument "stack expects a non-empty TensorList" and "stack
/// expects each tensor to be equal size, but got [2] at entry 0 and [3] at entry 1".
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim);

}  // namespace matmulviz
