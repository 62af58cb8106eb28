// at::eq, ne, lt, le, gt, ge and the bitwise ops of masks: see compare.h.
#include "core/ops/compare.h"

#include "core/autograd/grad_mode.h"
#include "core/ops/ops.h"
#include "core/ops/pointwise.h"  // promoteTypes
#include "core/ops/shape_rules.h"
#include "core/ops/strided_loop.h"

#include <optional>
#include <stdexcept>
#include <string>

namespace matmulviz {

namespace {

std::optional<DType> promote(std::optional<DType> a, std::optional<DType> b) {
  if (!a) return b;
  if (!b) return a;
  return promoteTypes(*a, *b);
}

/// at::native::combine_categories (aten/src/ATen/native/TypeProperties.cpp): the lower-priority
/// operands count only when their category is above the higher-priority ones'.
std::optional<DType> combineCategories(std::optional<DType> higher, std::optional<DType> lower) {
  if (higher && isFloating(*higher)) return higher;
  if (higher == DType::Bool || (lower && isFloating(*lower))) return promote(higher, lower);
  return higher ? higher : lower;
}

/// at::result_type from its three states: dimensioned tensors, 0-dim tensors, wrapped numbers.
DType resultType(std::optional<DType> dim, std::optional<DType> zeroDim,
                 std::optional<DType> wrapped) {
  return *combineCategories(dim, combineCategories(zeroDim, wrapped));
}

/// An element read exactly (long double holds every int64 and every double).
long double load(const void* p, DType t, int64_t i) {
  if (t == DType::Int64) return static_cast<long double>(static_cast<const int64_t*>(p)[i]);
  return loadAsDouble(p, t, i);
}

/// v converted to `t` and back, as TensorIterator casts each operand to the common dtype.
long double roundTo(DType t, long double v) {
  switch (t) {
    case DType::Float32:
      return static_cast<float>(v);
    case DType::Float16:
      return halfToFloat(floatToHalf(static_cast<float>(v)));
    case DType::BFloat16:
      return bfloat16ToFloat(floatToBFloat16(static_cast<float>(v)));
    case DType::Float64:
      return static_cast<double>(v);
    case DType::Int64:  // only int64, bool and Python ints reach an int64 comparison
      return v;
    case DType::Bool:
      return v != 0 ? 1 : 0;
  }
  return v;
}

bool holds(CompareOp op, long double x, long double y) {
  switch (op) {
    case CompareOp::Eq:
      return x == y;
    case CompareOp::Ne:
      return x != y;
    case CompareOp::Lt:
      return x < y;
    case CompareOp::Le:
      return x <= y;
    case CompareOp::Gt:
      return x > y;
    case CompareOp::Ge:
      return x >= y;
  }
  return false;
}

void refuseBackend(const Tensor& t, CompareOp op) {
  if (ComputeBackend* be = t.compute())
    throw std::invalid_argument(std::string(compareOpName(op)) +
                                ": comparisons are not supported on a device with its own memory "
                                "yet (" +
                                be->name() + "); run them on the cpu device");
}

/// A 0-dim host tensor: PyTorch lets it meet a tensor on any device (a CPU scalar).
bool isHostScalar(const Tensor& t) {
  return t.dim() == 0 && t.device() == nullptr;
}

/// out[i] = holds(op, a[i], b[i]) over `sizes`, both read through their (broadcast) strides and
/// rounded to `common`; out contiguous bool.
void fill(const Tensor& out, const Tensor& a, const Tensor& b, DType common, CompareOp op) {
  auto* po = static_cast<uint8_t*>(out.dataPtr());
  const void* pa = a.dataPtr();
  const void* pb = b.dataPtr();
  const DType ta = a.dtype(), tb = b.dtype();
  int64_t k = 0;  // forEachRun walks row-major, so the contiguous output advances one by one
  detail::forEachRun(out.sizes(), a.strides(), b.strides(),
                     [&](int64_t oa, int64_t ob, int64_t n, int64_t sa, int64_t sb) {
                       for (int64_t i = 0; i < n; ++i, ++k)
                         po[k] = holds(op, roundTo(common, load(pa, ta, oa + i * sa)),
                                       roundTo(common, load(pb, tb, ob + i * sb)))
                                     ? 1
                                     : 0;
                     });
}

const char* bitwiseName(BitwiseOp op) {
  return op == BitwiseOp::And ? "bitwise_and" : op == BitwiseOp::Or ? "bitwise_or" : "bitwise_xor";
}

/// PyTorch's dispatch error for a floating operand: "bitwise_and_cpu" not implemented for 'Float'.
void requireIntegral(DType common, const std::string& name, const Tensor& placed) {
  if (isFloating(common)) {
    const std::string type(scalarTypeName(common));
    throw std::invalid_argument("\"" + name + (placed.device() ? "_cuda" : "_cpu") +
                                "\" not implemented for '" + type + "'");
  }
}

int64_t loadInt(const void* p, DType t, int64_t i) {
  return t == DType::Bool ? static_cast<const uint8_t*>(p)[i] != 0
                          : static_cast<const int64_t*>(p)[i];
}

int64_t applyBitwise(BitwiseOp op, int64_t x, int64_t y) {
  return op == BitwiseOp::And ? (x & y) : op == BitwiseOp::Or ? (x | y) : (x ^ y);
}

void storeInt(void* p, DType t, int64_t i, int64_t v) {
  if (t == DType::Bool)
    static_cast<uint8_t*>(p)[i] = v != 0;
  else
    static_cast<int64_t*>(p)[i] = v;
}

}  // namespace

Tensor bitwiseNot(const Tensor& t) {
  requireIntegral(t.dtype(), "bitwise_not", t);
  if (ComputeBackend* be = t.compute())
    throw std::invalid_argument("bitwise_not: not supported on a device with its own memory yet (" +
                                be->name() + "); run it on the cpu device");
  OpScope scope(t.device(), "bitwise_not");
  Tensor out = empty(t.sizes(), t.dtype(), t.storage().devicePtr(), "bitwise_not output");
  if (out.hasData() && t.hasData() && out.numel() > 0) {
    void* po = out.dataPtr();
    const void* pt = t.dataPtr();
    const DType d = t.dtype();
    int64_t k = 0;
    detail::forEachRun(t.sizes(), t.strides(), t.strides(),
                       [&](int64_t o, int64_t, int64_t n, int64_t s, int64_t) {
                         for (int64_t i = 0; i < n; ++i, ++k) {
                           const int64_t v = loadInt(pt, d, o + i * s);
                           storeInt(po, d, k, d == DType::Bool ? !v : ~v);
                         }
                       });
  }
  return out;
}

Tensor bitwise(BitwiseOp op, const Tensor& a, const Tensor& b) {
  const std::string name = bitwiseName(op);
  if (a.device() != b.device() && !isHostScalar(a) && !isHostScalar(b))
    throw std::invalid_argument(name + ": expected both operands to be on the same device");
  const Tensor& placed = isHostScalar(a) ? b : a;
  const DType common = compareDType(a, b);
  requireIntegral(common, name, placed);
  for (const Tensor* t : {&a, &b})
    if (ComputeBackend* be = t->compute())
      throw std::invalid_argument(name + ": not supported on a device with its own memory yet (" +
                                  be->name() + "); run it on the cpu device");
  const Shape sizes = broadcastShapes(a.sizes(), b.sizes());
  OpScope scope(placed.device(), name);
  Tensor out = empty(sizes, common, placed.storage().devicePtr(), name + " output");
  if (out.hasData() && a.hasData() && b.hasData() && out.numel() > 0) {
    NoGradGuard noGrad;
    const Tensor ea = expand(a, sizes), eb = expand(b, sizes);
    void* po = out.dataPtr();
    const void* pa = ea.dataPtr();
    const void* pb = eb.dataPtr();
    int64_t k = 0;
    detail::forEachRun(sizes, ea.strides(), eb.strides(),
                       [&](int64_t oa, int64_t ob, int64_t n, int64_t sa, int64_t sb) {
                         for (int64_t i = 0; i < n; ++i, ++k)
                           storeInt(po, common, k,
                                    applyBitwise(op, loadInt(pa, a.dtype(), oa + i * sa),
                                                 loadInt(pb, b.dtype(), ob + i * sb)));
                       });
  }
  return out;
}

Tensor bitwise(BitwiseOp op, const Tensor& a, int64_t value, ScalarKind kind) {
  if (kind == ScalarKind::Float)  // always a floating common dtype: PyTorch's dispatch error
    requireIntegral(compareDType(a, kind), bitwiseName(op), a);
  const DType type = kind == ScalarKind::Bool ? DType::Bool : DType::Int64;
  const Tensor scalar = empty({}, type, nullptr, "scalar");
  storeInt(scalar.dataPtr(), type, 0, value);
  return bitwise(op, a, scalar);  // for integral types a 0-dim host tensor promotes as a number
}

std::string_view compareOpName(CompareOp op) {
  switch (op) {
    case CompareOp::Eq:
      return "eq";
    case CompareOp::Ne:
      return "ne";
    case CompareOp::Lt:
      return "lt";
    case CompareOp::Le:
      return "le";
    case CompareOp::Gt:
      return "gt";
    case CompareOp::Ge:
      return "ge";
  }
  return "?";
}

DType compareDType(const Tensor& a, const Tensor& b) {
  std::optional<DType> dim, zeroDim;
  for (const Tensor* t : {&a, &b}) {
    std::optional<DType>& state = t->dim() > 0 ? dim : zeroDim;
    state = promote(state, t->dtype());
  }
  return resultType(dim, zeroDim, std::nullopt);
}

DType compareDType(const Tensor& a, ScalarKind kind) {
  // A wrapped Python float counts as the default dtype, float32.
  const DType wrapped = kind == ScalarKind::Bool  ? DType::Bool
                        : kind == ScalarKind::Int ? DType::Int64
                                                  : DType::Float32;
  if (a.dim() > 0) return resultType(a.dtype(), std::nullopt, wrapped);
  return resultType(std::nullopt, a.dtype(), wrapped);
}

Tensor compare(CompareOp op, const Tensor& a, const Tensor& b) {
  const std::string name(compareOpName(op));
  if (a.device() != b.device() && !isHostScalar(a) && !isHostScalar(b))
    throw std::invalid_argument(name + ": expected both operands to be on the same device");
  refuseBackend(a, op);
  refuseBackend(b, op);
  const Shape sizes = broadcastShapes(a.sizes(), b.sizes());
  const Tensor& placed = isHostScalar(a) ? b : a;  // the output's device
  OpScope scope(placed.device(), name);
  Tensor out = empty(sizes, DType::Bool, placed.storage().devicePtr(), name + " output");
  if (out.hasData() && a.hasData() && b.hasData() && out.numel() > 0) {
    NoGradGuard noGrad;  // the broadcast views are read, never part of a graph
    fill(out, expand(a, sizes), expand(b, sizes), compareDType(a, b), op);
  }
  return out;
}

Tensor compare(CompareOp op, const Tensor& a, double value, ScalarKind kind) {
  const std::string name(compareOpName(op));
  refuseBackend(a, op);
  OpScope scope(a.device(), name);
  Tensor out = empty(a.sizes(), DType::Bool, a.storage().devicePtr(), name + " output");
  if (out.hasData() && a.hasData() && out.numel() > 0) {
    const DType common = compareDType(a, kind);
    const long double v = roundTo(common, value);
    auto* po = static_cast<uint8_t*>(out.dataPtr());
    const void* pa = a.dataPtr();
    const DType ta = a.dtype();
    int64_t k = 0;
    detail::forEachRun(a.sizes(), a.strides(), a.strides(),
                       [&](int64_t oa, int64_t, int64_t n, int64_t sa, int64_t) {
                         for (int64_t i = 0; i < n; ++i, ++k)
                           po[k] = holds(op, roundTo(common, load(pa, ta, oa + i * sa)), v) ? 1 : 0;
                       });
  }
  return out;
}

}  // namespace matmulviz
