#pragma once
// Comparisons: at::eq, ne, lt, le, gt, ge (aten/src/ATen/native/BinaryOps.cpp), elementwise
// with broadcasting, the result a new bool tensor. They are not differentiable: the result never
// has a grad_fn, whatever its inputs require (PyTorch's comparison outputs are outside the graph).
//
// Both sides are compared in their common dtype, as TensorIterator computes it
// (at::result_type, c10/core/ScalarType.h promoteTypes): a 0-dim tensor or a Python number
// counts only when its category (bool < integral < floating) is above the other operand's, and
// a Python float then counts as float32 (the default dtype). So a float16 tensor is compared
// with 0.1 rounded to float16, and an int64 tensor with 1.5 in float32, as in PyTorch.
//
// Device memory: the output only (numel bytes); a scalar, or a 0-dim host tensor beside a device
// tensor, is read on the host as PyTorch's CPU scalars are. On a device with its own memory
// (a ComputeBackend) the comparisons are refused with std::invalid_argument: no kernel yet.

#include "core/tensor/tensor.h"

#include <string_view>

namespace matmulviz {

enum class CompareOp { Eq, Ne, Lt, Le, Gt, Ge };

/// PyTorch's name of the op: "eq", "ne", "lt", "le", "gt", "ge".
std::string_view compareOpName(CompareOp op);

/// a <op> b with broadcasting (shapes as at::infer_size). Throws std::invalid_argument for
/// shapes that do not broadcast (PyTorch's message) and for operands on two devices (a 0-dim
/// host tensor beside a device tensor is allowed, as in PyTorch).
Tensor compare(CompareOp op, const Tensor& a, const Tensor& b);

/// The type of a Python number on the right of a comparison: bool, int or float.
enum class ScalarKind { Bool, Int, Float };

/// a <op> value, `value` a Python number of kind `kind` (a wrapped number in PyTorch's terms).
Tensor compare(CompareOp op, const Tensor& a, double value, ScalarKind kind);

inline Tensor eq(const Tensor& a, const Tensor& b) {
  return compare(CompareOp::Eq, a, b);
}
inline Tensor ne(const Tensor& a, const Tensor& b) {
  return compare(CompareOp::Ne, a, b);
}
inline Tensor lt(const Tensor& a, const Tensor& b) {
  return compare(CompareOp::Lt, a, b);
}
inline Tensor le(const Tensor& a, const Tensor& b) {
  return compare(CompareOp::Le, a, b);
}
inline Tensor gt(const Tensor& a, const Tensor& b) {
  return compare(CompareOp::Gt, a, b);
}
inline Tensor ge(const Tensor& a, const Tensor& b) {
  return compare(CompareOp::Ge, a, b);
}

// ---- bitwise ops, for masks: ~m, m1 & m2, m1 | m2, m1 ^ m2 (at::bitwise_not/and/or/xor) ----
// bool and int64 only (logical on bool), the result in the common dtype (bool with bool is bool,
// with int64 int64), broadcasting as the comparisons, outside the graph, the output the only
// allocation. A floating operand throws std::invalid_argument with PyTorch's text
// ("\"bitwise_and_cpu\" not implemented for 'Float'", _cuda on a device).

enum class BitwiseOp { And, Or, Xor };

/// ~t: logical not of a bool tensor, ~x of an int64 one.
Tensor bitwiseNot(const Tensor& t);
/// a <op> b.
Tensor bitwise(BitwiseOp op, const Tensor& a, const Tensor& b);
/// a <op> value, `value` a Python bool or int (a Python float: PyTorch's 'Float' error).
Tensor bitwise(BitwiseOp op, const Tensor& a, int64_t value, ScalarKind kind);

/// The dtype two tensors are compared in (at::result_type of two tensors).
DType compareDType(const Tensor& a, const Tensor& b);
/// The dtype a tensor and a Python number of kind `kind` are compared in.
DType compareDType(const Tensor& a, ScalarKind kind);

}  // namespace matmulviz
