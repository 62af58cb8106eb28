// at::add / at::sub / at::div between tensors, broadcasting (aten/src/ATen/native/BinaryOps.cpp),
// with at::result_type promotion and AddBackward0, SubBackward0, DivBackward0
// (tools/autograd/derivatives.yaml, PyTorch 1.13).
#include "core/autograd/grad_mode.h"
#include "core/autograd/node.h"
#include "core/ops/pointwise_kernels.h"

#include <optional>
#include <stdexcept>

namespace matmulviz {

namespace {

// ---- at::result_type (c10/core/ScalarType.h promoteTypes, TypeProperties.cpp) ----

/// The category: bool 0 < integer 1 < floating 2 (bool by name, so that a bool dtype added to
/// DType later is ranked without a change here).
int category(DType t) {
  if (isFloating(t)) return 2;
  return dtypeName(t) == "bool" ? 0 : 1;
}

/// Within the float category: wider wins; float16 with bfloat16 gives float32.
int floatRank(DType t) {
  switch (t) {
    case DType::Float16:
    case DType::BFloat16:
      return 1;
    case DType::Float32:
      return 2;
    case DType::Float64:
      return 3;
    default:
      return 0;
  }
}

}  // namespace

DType promoteTypes(DType a, DType b) {
  if (a == b) return a;
  if (category(a) != category(b)) return category(a) > category(b) ? a : b;
  if (floatRank(a) == 1 && floatRank(b) == 1) return DType::Float32;
  return floatRank(a) >= floatRank(b) ? a : b;
}

namespace {

using Maybe = std::optional<DType>;

Maybe promoteSkip(Maybe a, Maybe b) {
  if (!a) return b;
  if (!b) return a;
  return promoteTypes(*a, *b);
}

/// combine_categories(higher, lower) of TypeProperties.cpp.
Maybe combine(Maybe higher, Maybe lower) {
  if (higher && isFloating(*higher)) return higher;
  if ((higher && category(*higher) == 0) || (lower && isFloating(*lower)))
    return promoteSkip(higher, lower);
  return higher ? higher : lower;
}

}  // namespace

DType resultType(const Tensor& a, const Tensor& b) {
  Maybe dimResult, zeroResult;
  for (const Tensor* t : {&a, &b}) {
    Maybe& slot = t->dim() > 0 ? dimResult : zeroResult;
    slot = promoteSkip(slot, t->dtype());
  }
  return *combine(dimResult, zeroResult);
}

DType resultType(const Tensor& t, Scalar s) {
  return *combine(t.dtype(), s.integral ? DType::Int64 : DType::Float32);
}

namespace {

enum class BinaryKind { Add, Sub, Div };

const char* opName(BinaryKind k) {
  switch (k) {
    case BinaryKind::Add:
      return "add";
    case BinaryKind::Sub:
      return "sub";
    case BinaryKind::Div:
      return "div";
  }
  return "?";
}

class AddBackward final : public Node {
 public:
  AddBackward(const Tensor& a, const Tensor& b)
      : aSizes_(a.sizes()), bSizes_(b.sizes()), aType_(a.dtype()), bType_(b.dtype()) {}
  std::string name() const override { return "AddBackward0"; }
  TensorList apply(TensorList&& g) override {
    TensorList out(2);
    if (!g[0].defined()) return out;
    if (needsInputGrad(0)) out[0] = detail::gradTo(g[0], aSizes_, aType_);
    if (needsInputGrad(1)) out[1] = detail::gradTo(g[0], bSizes_, bType_);
    return out;
  }

 private:
  Shape aSizes_, bSizes_;
  DType aType_, bType_;
};

class SubBackward final : public Node {
 public:
  SubBackward(const Tensor& a, const Tensor& b)
      : aSizes_(a.sizes()), bSizes_(b.sizes()), aType_(a.dtype()), bType_(b.dtype()) {}
  std::string name() const override { return "SubBackward0"; }
  TensorList apply(TensorList&& g) override {
    TensorList out(2);
    if (!g[0].defined()) return out;
    if (needsInputGrad(1)) out[1] = neg(g[0]);  // "other" < "self"
    if (needsInputGrad(0)) out[0] = g[0];
    detail::reduceGradsInOrder(out, {aSizes_, bSizes_}, {aType_, bType_});
    return out;
  }

 private:
  Shape aSizes_, bSizes_;
  DType aType_, bType_;
};

class DivBackward final : public Node {
 public:
  DivBackward(const Tensor& self, const Tensor& other)
      : selfSizes_(self.sizes()),
        otherSizes_(other.sizes()),
        selfType_(self.dtype()),
        otherType_(other.dtype()) {
    const Tensor& needing = self.requiresGrad() ? self : other;
    other_ = SavedTensor(other, savedWhy("other", name(), needing));
    if (other.requiresGrad()) self_ = SavedTensor(self, savedWhy("self", name(), other));
  }
  std::string name() const override { return "DivBackward0"; }
  TensorList apply(TensorList&& g) override {
    TensorList out(2);
    if (!g[0].defined()) return out;
    const Tensor& other = other_.get();
    if (needsInputGrad(1)) {  // "other" < "self" (tools/autograd/load_derivatives.py)
      // div_tensor_other_backward: -grad * ((self / other) / other)
      Tensor q = div(div(self_.get(), other), other);
      out[1] = mul(neg(g[0]), q);
    }
    if (needsInputGrad(0)) out[0] = div(g[0], other);
    detail::reduceGradsInOrder(out, {selfSizes_, otherSizes_}, {selfType_, otherType_});
    return out;
  }
  void releaseSaved() override {
    self_.reset();
    other_.reset();
  }
  std::vector<std::pair<std::string, Tensor>> savedTensors() const override {
    return {{"self", self_.get()}, {"other", other_.get()}};
  }

 private:
  Shape selfSizes_, otherSizes_;
  DType selfType_, otherType_;
  SavedTensor self_, other_;
};

/// The device both operands agree on: the same one, or a 0-dim host tensor joining the other's.
DeviceContext* commonDevice(const Tensor& a, const Tensor& b) {
  if (a.device() == b.device()) return a.device();
  if (b.dim() == 0 && !b.device()) return a.device();
  if (a.dim() == 0 && !a.device()) return b.device();
  throw std::invalid_argument(
      "Expected all tensors to be on the same device, but found at least two devices");
}

Tensor binary(BinaryKind kind, const Tensor& a, const Tensor& b) {
  const char* name = opName(kind);
  const Shape sizes = broadcastShapes(a.sizes(), b.sizes());
  DeviceContext* device = commonDevice(a, b);
  const Tensor& onDevice = device == a.device() ? a : b;
  DType dtype = resultType(a, b);
  if (kind == BinaryKind::Div && !isFloating(dtype)) dtype = DType::Float32;
  OpScope op(device, name);
  Tensor out = empty(sizes, dtype, onDevice.storage().devicePtr(),
                     kind == BinaryKind::Add ? "sum" : std::string(name) + " output");
  if (out.hasData() && a.hasData() && b.hasData() && out.numel() > 0) {
    NoGradGuard noGrad;
    const Tensor ae = expand(a, sizes), be = expand(b, sizes);
    if (out.compute()) {
      // The backend adds same-dtype, same-shape tensors (gradient accumulation).
      if (kind != BinaryKind::Add || a.sizes() != sizes || b.sizes() != sizes ||
          a.dtype() != dtype || b.dtype() != dtype)
        detail::requireHostCompute(out, std::string(name) + " with broadcasting or promotion");
      copyInto(out, a);
      addInPlace(out, b);
    } else {
      detail::requireHostCompute(a, name);
      detail::requireHostCompute(b, name);
      copyInto(out, ae);  // converts to the result dtype
      switch (kind) {
        case BinaryKind::Add:
          detail::combineInPlace(out, be, [](auto x, auto y) { return x + y; });
          break;
        case BinaryKind::Sub:
          detail::combineInPlace(out, be, [](auto x, auto y) { return x - y; });
          break;
        case BinaryKind::Div:
          detail::combineInPlace(out, be, [](auto x, auto y) { return x / y; });
          break;
      }
    }
  }
  if (anyRequiresGrad({&a, &b})) {
    std::shared_ptr<Node> node;
    switch (kind) {
      case BinaryKind::Add:
        node = std::make_shared<AddBackward>(a, b);
        break;
      case BinaryKind::Sub:
        node = std::make_shared<SubBackward>(a, b);
        break;
      case BinaryKind::Div:
        node = std::make_shared<DivBackward>(a, b);
        break;
    }
    node->nextEdges = {gradientEdge(a), gradientEdge(b)};
    setHistory(out, node);
  }
  return out;
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b) {
  return binary(BinaryKind::Add, a, b);
}

Tensor sub(const Tensor& a, const Tensor& b) {
  return binary(BinaryKind::Sub, a, b);
}

Tensor div(const Tensor& a, const Tensor& b) {
  return binary(BinaryKind::Div, a, b);
}

}  // namespace matmulviz
