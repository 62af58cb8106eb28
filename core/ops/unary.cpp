// Unary pointwise functions: neg, cos, sin, exp, relu (aten/src/ATen/native/UnaryOps.cpp,
// Activation.cpp) and their nodes (tools/autograd/derivatives.yaml, PyTorch 1.13):
//   neg:  NegBackward0   -grad
//   cos:  CosBackward0   grad * -self.sin()        saves self
//   sin:  SinBackward0   grad * self.cos()         saves self
//   exp:  ExpBackward0   grad * result             saves result
//   relu: ReluBackward0  threshold_backward(grad, result, 0)   saves result
#include "core/autograd/grad_mode.h"
#include "core/autograd/node.h"
#include "core/ops/pointwise_kernels.h"

#include <cmath>
#include <string_view>

namespace matmulviz {

namespace {

enum class UnaryKind { Neg, Cos, Sin, Exp, Relu };

/// Result dtype: neg and relu keep it; cos, sin, exp turn int64 into float32 (the default
/// dtype), as PyTorch's unary float ops promote integer inputs.
DType unaryType(UnaryKind k, DType in) {
  if (k == UnaryKind::Neg || k == UnaryKind::Relu) return in;
  return isFloating(in) ? in : DType::Float32;
}

const char* opName(UnaryKind k) {
  switch (k) {
    case UnaryKind::Neg:
      return "neg";
    case UnaryKind::Cos:
      return "cos";
    case UnaryKind::Sin:
      return "sin";
    case UnaryKind::Exp:
      return "exp";
    case UnaryKind::Relu:
      return "relu";
  }
  return "?";
}

/// out = op(t) as a new tensor of `dtype` (no graph).
Tensor compute(UnaryKind kind, const Tensor& t, DType dtype) {
  const char* name = opName(kind);
  OpScope op(t.device(), name);
  Tensor out = empty(t.sizes(), dtype, t.storage().devicePtr(), std::string(name) + " output");
  if (!out.hasData() || !t.hasData() || out.numel() == 0) return out;
  detail::requireHostCompute(out, name);
  NoGradGuard noGrad;
  copyInto(out, t);
  // Float results in double, rounded once on the store (correctly rounded for float32).
  switch (kind) {
    case UnaryKind::Neg:
      detail::mapInPlace(out, [](auto x) { return -x; });
      break;
    case UnaryKind::Cos:
      detail::mapInPlace(out, [](auto x) { return std::cos(static_cast<double>(x)); });
      break;
    case UnaryKind::Sin:
      detail::mapInPlace(out, [](auto x) { return std::sin(static_cast<double>(x)); });
      break;
    case UnaryKind::Exp:
      detail::mapInPlace(out, [](auto x) { return std::exp(static_cast<double>(x)); });
      break;
    case UnaryKind::Relu:
      // NaN stays NaN (clamp_min propagates it)
      detail::mapInPlace(out, [](auto x) { return x < decltype(x){0} ? decltype(x){0} : x; });
      break;
  }
  return out;
}

class NegBackward final : public Node {
 public:
  std::string name() const override { return "NegBackward0"; }
  TensorList apply(TensorList&& g) override {
    if (!g[0].defined()) return {Tensor()};
    return {neg(g[0])};
  }
};

/// CosBackward0 / SinBackward0 (save self), ExpBackward0 / ReluBackward0 (save result).
class SavingBackward final : public Node {
 public:
  SavingBackward(UnaryKind kind, Tensor saved, const Tensor& input)
      : kind_(kind),
        dtype_(input.dtype()),
        saved_(std::move(saved), savedWhy(role(kind), nodeName(kind), input)) {
    if (role(kind) == std::string_view("result")) saved_.setProducer(nodeName(kind));
  }
  static const char* role(UnaryKind k) {
    return k == UnaryKind::Cos || k == UnaryKind::Sin ? "self" : "result";
  }
  static const char* nodeName(UnaryKind k) {
    switch (k) {
      case UnaryKind::Cos:
        return "CosBackward0";
      case UnaryKind::Sin:
        return "SinBackward0";
      case UnaryKind::Exp:
        return "ExpBackward0";
      default:
        return "ReluBackward0";
    }
  }
  std::string name() const override { return nodeName(kind_); }
  TensorList apply(TensorList&& g) override {
    if (!g[0].defined()) return {Tensor()};
    const Tensor& s = saved_.get();
    Tensor out;
    switch (kind_) {
      case UnaryKind::Cos:
        out = mul(g[0], neg(sin(s)));
        break;
      case UnaryKind::Sin:
        out = mul(g[0], cos(s));
        break;
      case UnaryKind::Exp:
        out = mul(g[0], s);
        break;
      default:
        out = thresholdBackward(g[0], s);
        break;
    }
    return {out.dtype() == dtype_ ? out : toDType(out, dtype_)};
  }
  void releaseSaved() override { saved_.reset(); }
  std::vector<std::pair<std::string, Tensor>> savedTensors() const override {
    return {{role(kind_), saved_.get()}};
  }

 private:
  UnaryKind kind_;
  DType dtype_;
  SavedTensor saved_;
};

}  // namespace

Tensor thresholdBackward(const Tensor& g, const Tensor& result) {
  OpScope op(g.device(), "threshold_backward");
  Tensor out = empty(g.sizes(), g.dtype(), g.storage().devicePtr(), "threshold_backward output");
  if (!out.hasData() || !result.hasData() || out.numel() == 0) return out;
  detail::requireHostCompute(out, "threshold_backward");
  copyInto(out, g);
  detail::combineInPlace(out, result,
                         [](auto gv, auto r) { return r > decltype(r){0} ? gv : decltype(gv){0}; });
  return out;
}

namespace {

Tensor unary(UnaryKind kind, const Tensor& t) {
  Tensor out = compute(kind, t, unaryType(kind, t.dtype()));
  if (anyRequiresGrad({&t})) {
    std::shared_ptr<Node> node;
    if (kind == UnaryKind::Neg)
      node = std::make_shared<NegBackward>();
    else if (kind == UnaryKind::Cos || kind == UnaryKind::Sin)
      node = std::make_shared<SavingBackward>(kind, t, t);
    else
      node = std::make_shared<SavingBackward>(kind, detail::savedOutput(out), t);
    node->nextEdges = {gradientEdge(t)};
    setHistory(out, node);
  }
  return out;
}

}  // namespace

Tensor neg(const Tensor& t) {
  if (dtypeName(t.dtype()) == "bool")
    throw std::invalid_argument(
        "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
        "invert a mask, use the `~` or `logical_not()` operator instead.");
  return unary(UnaryKind::Neg, t);
}

Tensor cos(const Tensor& t) {
  return unary(UnaryKind::Cos, t);
}

Tensor sin(const Tensor& t) {
  return unary(UnaryKind::Sin, t);
}

Tensor exp(const Tensor& t) {
  return unary(UnaryKind::Exp, t);
}

Tensor relu(const Tensor& t) {
  return unary(UnaryKind::Relu, t);
}

}  // namespace matmulviz
