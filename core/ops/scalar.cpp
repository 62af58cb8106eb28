// A tensor with a Python number: t + s, t - s, s - t, t * s, t / s, s / t, and reciprocal
// (aten/src/ATen/native/BinaryOps.cpp, UnaryOps.cpp). In PyTorch 1.13 a Python number becomes a
// wrapped 0-dim CPU tensor, so t + s records AddBackward0 (not AddBackward1) with no edge for the
// scalar; only s - t is at::rsub(Tensor, Scalar): RsubBackward1. s / t is
// torch.Tensor.__rtruediv__: t.reciprocal() * s.
#include "core/autograd/grad_mode.h"
#include "core/autograd/node.h"
#include "core/ops/pointwise_kernels.h"

namespace matmulviz {

namespace {

enum class ScalarOp { Add, Sub, Rsub, Mul, Div };

const char* opName(ScalarOp k) {
  switch (k) {
    case ScalarOp::Add:
      return "add";
    case ScalarOp::Sub:
      return "sub";
    case ScalarOp::Rsub:
      return "rsub";
    case ScalarOp::Mul:
      return "mul";
    case ScalarOp::Div:
      return "div";
  }
  return "?";
}

/// The wrapped number PyTorch makes of a Python scalar: a 0-dim host tensor, int64 or float64.
Tensor wrapped(Scalar s) {
  return fromDoubles({}, {s.value}, s.integral ? DType::Int64 : DType::Float64);
}

/// AddBackward0 / SubBackward0 (grad to self) and RsubBackward1 (-grad to self): no saved tensor.
class AddSubScalarBackward final : public Node {
 public:
  AddSubScalarBackward(ScalarOp kind, const Tensor& t)
      : kind_(kind), sizes_(t.sizes()), dtype_(t.dtype()) {}
  std::string name() const override {
    return kind_ == ScalarOp::Add   ? "AddBackward0"
           : kind_ == ScalarOp::Sub ? "SubBackward0"
                                    : "RsubBackward1";
  }
  TensorList apply(TensorList&& g) override {
    TensorList out(nextEdges.size());
    if (!g[0].defined() || !needsInputGrad(0)) return out;
    out[0] = detail::gradTo(kind_ == ScalarOp::Rsub ? neg(g[0]) : g[0], sizes_, dtype_);
    return out;
  }

 private:
  ScalarOp kind_;
  Shape sizes_;
  DType dtype_;
};

/// MulBackward0 / DivBackward0 with a wrapped number as other: saves other (grad * other,
/// grad / other); self is saved only when other requires grad, which a number never does.
class MulDivScalarBackward final : public Node {
 public:
  MulDivScalarBackward(ScalarOp kind, const Tensor& t, Scalar s)
      : kind_(kind), s_(s), sizes_(t.sizes()), dtype_(t.dtype()) {
    other_ = SavedTensor(wrapped(s), savedWhy("other", name(), t));
  }
  std::string name() const override {
    return kind_ == ScalarOp::Mul ? "MulBackward0" : "DivBackward0";
  }
  TensorList apply(TensorList&& g) override {
    TensorList out(nextEdges.size());
    if (!g[0].defined() || !needsInputGrad(0)) return out;
    Tensor r = kind_ == ScalarOp::Mul ? mulScalar(g[0], s_) : divScalar(g[0], s_);
    out[0] = detail::gradTo(r, sizes_, dtype_);
    return out;
  }
  void releaseSaved() override { other_.reset(); }
  std::vector<std::pair<std::string, Tensor>> savedTensors() const override {
    return {{"self", Tensor()}, {"other", other_.get()}};
  }

 private:
  ScalarOp kind_;
  Scalar s_;
  Shape sizes_;
  DType dtype_;
  SavedTensor other_;
};

class ReciprocalBackward final : public Node {
 public:
  ReciprocalBackward(const Tensor& result, const Tensor& t)
      : result_(result, savedWhy("result", "ReciprocalBackward0", t)), dtype_(t.dtype()) {
    result_.setProducer("ReciprocalBackward0");
  }
  std::string name() const override { return "ReciprocalBackward0"; }
  TensorList apply(TensorList&& g) override {
    if (!g[0].defined()) return {Tensor()};
    // -grad * (result * result).conj()
    const Tensor& r = result_.get();
    Tensor sq = mul(r, r);
    Tensor out = mul(neg(g[0]), sq);
    return {out.dtype() == dtype_ ? out : toDType(out, dtype_)};
  }
  void releaseSaved() override { result_.reset(); }
  std::vector<std::pair<std::string, Tensor>> savedTensors() const override {
    return {{"result", result_.get()}};
  }

 private:
  SavedTensor result_;
  DType dtype_;
};

Tensor scalarOp(ScalarOp kind, const Tensor& t, Scalar s) {
  const char* name = opName(kind);
  DType dtype = resultType(t, s);
  if (kind == ScalarOp::Div && !isFloating(dtype)) dtype = DType::Float32;
  OpScope op(t.device(), name);
  Tensor out = empty(t.sizes(), dtype, t.storage().devicePtr(), std::string(name) + " output");
  if (out.hasData() && t.hasData() && out.numel() > 0) {
    detail::requireHostCompute(out, name);
    NoGradGuard noGrad;
    copyInto(out, t);  // converts to the result dtype
    detail::dispatchArithmetic(dtype, [&](auto tag) {
      using Acc = typename decltype(tag)::Acc;
      const auto v = static_cast<Acc>(s.value);  // PyTorch casts the scalar to the op's type
      switch (kind) {
        case ScalarOp::Add:
          detail::mapInPlace(out, [v](auto x) { return x + v; });
          break;
        case ScalarOp::Sub:
          detail::mapInPlace(out, [v](auto x) { return x - v; });
          break;
        case ScalarOp::Rsub:
          detail::mapInPlace(out, [v](auto x) { return v - x; });
          break;
        case ScalarOp::Mul:
          detail::mapInPlace(out, [v](auto x) { return x * v; });
          break;
        case ScalarOp::Div:
          detail::mapInPlace(out, [v](auto x) { return x / v; });
          break;
      }
    });
  }
  if (anyRequiresGrad({&t})) {
    std::shared_ptr<Node> node;
    if (kind == ScalarOp::Mul || kind == ScalarOp::Div)
      node = std::make_shared<MulDivScalarBackward>(kind, t, s);
    else
      node = std::make_shared<AddSubScalarBackward>(kind, t);
    node->nextEdges = {gradientEdge(t)};
    if (kind != ScalarOp::Rsub) node->nextEdges.push_back({});  // the number's (None) edge
    setHistory(out, node);
  }
  return out;
}

}  // namespace

Tensor addScalar(const Tensor& t, Scalar s) {
  return scalarOp(ScalarOp::Add, t, s);
}

Tensor subScalar(const Tensor& t, Scalar s) {
  return scalarOp(ScalarOp::Sub, t, s);
}

Tensor rsubScalar(const Tensor& t, Scalar s) {
  return scalarOp(ScalarOp::Rsub, t, s);
}

Tensor mulScalar(const Tensor& t, Scalar s) {
  return scalarOp(ScalarOp::Mul, t, s);
}

Tensor divScalar(const Tensor& t, Scalar s) {
  return scalarOp(ScalarOp::Div, t, s);
}

Tensor reciprocal(const Tensor& t) {
  const DType dtype = isFloating(t.dtype()) ? t.dtype() : DType::Float32;
  OpScope op(t.device(), "reciprocal");
  Tensor out = empty(t.sizes(), dtype, t.storage().devicePtr(), "reciprocal output");
  if (out.hasData() && t.hasData() && out.numel() > 0) {
    detail::requireHostCompute(out, "reciprocal");
    NoGradGuard noGrad;
    copyInto(out, t);
    detail::mapInPlace(out, [](auto x) { return decltype(x){1} / x; });
  }
  if (anyRequiresGrad({&t})) {
    auto node = std::make_shared<ReciprocalBackward>(detail::savedOutput(out), t);
    node->nextEdges = {gradientEdge(t)};
    setHistory(out, node);
  }
  return out;
}

Tensor rdivScalar(const Tensor& t, Scalar s) {
  // torch/_tensor.py __rtruediv__: self.reciprocal() * other
  return mulScalar(reciprocal(t), s);
}

}  // namespace matmulviz
