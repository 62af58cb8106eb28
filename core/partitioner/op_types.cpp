#include "core/partitioner/op_types.h"

#include <algorithm>
#include <iterator>

namespace matmulviz::partitioner {

namespace {

// get_default_op_list's explicit list of cheap ops (getitem stands for operator.getitem).
constexpr std::string_view kRecomputable[] = {
    "add", "sub", "div", "atan2", "mul", "max", "min", "pow", "remainder", "fmod", "__and__",
    "__or__", "__xor__", "__lshift__", "__rshift__", "eq", "ne", "ge", "gt", "le", "lt", "abs",
    "bitwise_not", "ceil", "floor", "frac", "neg", "relu", "round", "silu", "trunc", "log", "log10",
    "log1p", "log2", "lgamma", "exp", "expm1", "erf", "erfc", "cos", "acos", "cosh", "sin", "asin",
    "sinh", "tan", "atan", "tanh", "atanh", "sqrt", "rsqrt", "reciprocal", "sigmoid", "softplus",
    "threshold", "threshold_backward", "clamp", "where", "lerp", "addcmul", "gelu", "gelu_backward",
    "sum", "mean", "_grad_sum_to_size", "sum_to_size", "amax", "to", "type_as", "getitem", "rsub",
    "_to_copy",
    // prims and the second block of the list
    "convert_element_type", "clone", "full_like", "var", "std", "_unsafe_view", "reshape",
    "broadcast_tensors", "scalar_tensor", "ones", "new_zeros", "lift_fresh_copy", "arange", "triu",
    "var_mean", "isinf", "any", "full", "zeros", "empty", "empty_like", "argmax", "maximum", "iota",
    "_low_memory_max_pool_offsets_to_indices", "index", "gather", "zeros_like",
    // aten ops tagged `pointwise` that the engine's graphs use and the list above lacks
    "sigmoid_backward", "tanh_backward", "silu_backward", "native_dropout_backward", "sign",
    "clamp_min", "clamp_max", "masked_fill", "fill", "bitwise_and", "bitwise_or", "logical_not",
    "minimum", "square", "addcdiv", "hardtanh_backward"};

constexpr std::string_view kViews[] = {
    "squeeze",          "unsqueeze", "alias",      "view",    "slice",  "t",
    "broadcast_in_dim", "expand",    "as_strided", "permute", "select", "split"};

constexpr std::string_view kComputeIntensive[] = {"mm",
                                                  "convolution",
                                                  "convolution_backward",
                                                  "bmm",
                                                  "addmm",
                                                  "_scaled_dot_product_flash_attention",
                                                  "_scaled_dot_product_efficient_attention",
                                                  "_flash_attention_forward",
                                                  "_efficient_attention_forward",
                                                  "upsample_bilinear2d",
                                                  "_scaled_mm"};

constexpr std::string_view kRandom[] = {"native_dropout", "rand_like", "randn_like"};

template <size_t N>
bool contains(const std::string_view (&list)[N], std::string_view op) {
  return std::find(std::begin(list), std::end(list), op) != std::end(list);
}

bool isCall(const Node& n) {
  return n.kind == NodeKind::CallFunction;
}

}  // namespace

bool isViewOp(std::string_view op) {
  return contains(kViews, op);
}
bool isRecomputableOp(std::string_view op) {
  return contains(kRecomputable, op) || isViewOp(op);
}
bool isComputeIntensiveOp(std::string_view op) {
  return contains(kComputeIntensive, op);
}
bool isRandomOp(std::string_view op) {
  return contains(kRandom, op);
}
bool isFusibleOp(std::string_view op) {
  return isRecomputableOp(op) || isRandomOp(op);
}

bool isRecomputable(const Node& n) {
  return isCall(n) && isRecomputableOp(n.op);
}
bool isView(const Node& n) {
  return isCall(n) && isViewOp(n.op);
}
bool isComputeIntensive(const Node& n) {
  return isCall(n) && isComputeIntensiveOp(n.op);
}
bool isRandom(const Node& n) {
  return isCall(n) && isRandomOp(n.op);
}

bool isFusible(const Node& a, const Node& b) {
  if (isCall(b) && b.op == "cat") return true;
  return isCall(a) && isCall(b) && isFusibleOp(a.op) && isFusibleOp(b.op);
}

}  // namespace matmulviz::partitioner
