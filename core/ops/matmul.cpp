// mm, bmm and matmul with PyTorch's rules (aten/src/ATen/native/LinearAlgebra.cpp: matmul,
// should_fold; tools/autograd/derivatives.yaml: mm and bmm save mat2 only when self requires
// grad, and self only when mat2 requires grad).
#include "core/autograd/grad_mode.h"
#include "core/autograd/node.h"
#include "core/ops/flop_counter.h"
#include "core/ops/gemm_kernel.h"
#include "core/ops/ops.h"
#include "core/ops/shape_rules.h"

#include <optional>
#include <stdexcept>

namespace matmulviz {

namespace {

std::string dims(const Tensor& t) {
  std::string s;
  for (int64_t i = 0; i < t.dim(); ++i) s += (i ? "x" : "") + std::to_string(t.size(i));
  return s;
}

/// A matrix operand BLAS can read, making a contiguous copy (allocated like PyTorch's
/// prepare_matrix_for_cublas clone) only when the strides do not allow it.
Tensor blasReady(const Tensor& t) {
  const int64_t d = t.dim();
  if (detail::blasCompatible(t.size(d - 2), t.size(d - 1), t.stride(d - 2), t.stride(d - 1)))
    return t;
  NoGradGuard noGrad;
  return clone(t, MemoryFormat::Contiguous);
}

/// The product for [B, n, m] @ [B, m, p] into a new tensor.
Tensor product3d(const Tensor& a, const Tensor& b, const char* op) {
  OpScope scope(a.device(), op);
  Tensor out = empty({a.size(0), a.size(1), b.size(2)}, a.dtype(), a.storage().devicePtr(),
                     std::string(op) + " output");
  detail::batchedGemm(out, blasReady(a), blasReady(b));
  return out;
}

/// The product for [n, m] @ [m, p] into a new [n, p] tensor, the same allocation as product3d of
/// the unsqueezed operands (PyTorch's mm allocates its [n, p] result once). Host and meta
/// memory take the 2-d operands as they are; a device with a compute backend takes 3-d ones.
Tensor product2d(const Tensor& a, const Tensor& b) {
  const int64_t n = a.size(0), p = b.size(1);
  if (a.compute())
    return makeView(product3d(unsqueeze(a, 0), unsqueeze(b, 0), "mm"), {n, p}, {p, 1}, 0);
  OpScope scope(a.device(), "mm");
  Tensor out = empty({n, p}, a.dtype(), a.storage().devicePtr(), "mm output");
  out.impl()->strides = {p, 1};  // as the view of product3d's [1, n, p] result (p == 0 too)
  detail::batchedGemm(out, blasReady(a), blasReady(b));
  return out;
}

class MatProductBackward final : public Node {
 public:
  MatProductBackward(bool batched, const Tensor& self, const Tensor& mat2, bool needSelf,
                     bool needMat2)
      : batched_(batched),
        counted_(!FlopsNotCounted::active()),
        selfColumnMajor_(!batched && columnMajor(self)),
        mat2ColumnMajor_(!batched && columnMajor(mat2)) {
    const std::string node = name();
    // mat2 is needed for self's gradient, self for mat2's gradient.
    if (needSelf) mat2_ = SavedTensor(mat2, savedWhy("mat2", node, self));
    if (needMat2) self_ = SavedTensor(self, savedWhy("self", node, mat2));
  }
  std::string name() const override { return batched_ ? "BmmBackward0" : "MmBackward0"; }
  TensorList apply(TensorList&& g) override {
    TensorList out(2);
    const Tensor& grad = g[0];
    if (!grad.defined()) return out;
    std::optional<FlopsNotCounted> uncounted;  // the backward of matmul's mv path (MvBackward0)
    if (!counted_) uncounted.emplace();
    // mat2's gradient first: PyTorch's generated nodes compute their inputs' gradients in the
    // sorted order of the formulas' names (tools/autograd/load_derivatives.py), "mat2" < "self".
    if (batched_) {
      if (needsInputGrad(1)) out[1] = bmm(transpose(self_.get(), 1, 2), grad);
      if (needsInputGrad(0)) out[0] = bmm(grad, transpose(mat2_.get(), 1, 2));
    } else {  // mm_mat2_backward and mm_mat1_backward (torch/csrc/autograd/FunctionsManual.cpp)
      const Tensor& self = self_.get();
      const Tensor& mat2 = mat2_.get();
      if (needsInputGrad(1))
        out[1] = mat2ColumnMajor_ ? transpose(mm(transpose(grad, 0, 1), self), 0, 1)
                                  : mm(transpose(self, 0, 1), grad);
      if (needsInputGrad(0))
        out[0] = selfColumnMajor_ ? transpose(mm(mat2, transpose(grad, 0, 1)), 0, 1)
                                  : mm(grad, transpose(mat2, 0, 1));
    }
    return out;
  }
  void releaseSaved() override {
    self_.reset();
    mat2_.reset();
  }
  std::vector<std::pair<std::string, Tensor>> savedTensors() const override {
    return {{"self", self_.get()}, {"mat2", mat2_.get()}};
  }

 private:
  /// "if input was column-major, return grad as column-order for efficiency": a 2-d operand
  /// with strides (1, rows) gets its gradient computed transposed, so it arrives with the
  /// operand's own layout (and AccumulateGrad need not copy it).
  static bool columnMajor(const Tensor& t) {
    return t.dim() == 2 && t.stride(0) == 1 && t.stride(1) == t.size(0);
  }

  bool batched_;
  bool counted_;  // false for matmul's mv path: PyTorch's flop counter does not count aten.mv
  bool selfColumnMajor_, mat2ColumnMajor_;  // the operands' layouts in the forward
  SavedTensor self_, mat2_;
};

/// DotBackward0 (derivatives.yaml: dot: self: grad * tensor, tensor: grad * self): saves tensor
/// iff self requires grad and self iff tensor does.
class DotBackward final : public Node {
 public:
  DotBackward(const Tensor& self, const Tensor& tensor, bool needSelf, bool needTensor) {
    if (needSelf) tensor_ = SavedTensor(tensor, savedWhy("tensor", "DotBackward0", self));
    if (needTensor) self_ = SavedTensor(self, savedWhy("self", "DotBackward0", tensor));
  }
  std::string name() const override { return "DotBackward0"; }
  TensorList apply(TensorList&& g) override {
    TensorList out(2);
    if (!g[0].defined()) return out;
    if (needsInputGrad(0)) out[0] = mul(g[0], tensor_.get());  // "self" < "tensor"
    if (needsInputGrad(1)) out[1] = mul(g[0], self_.get());
    return out;
  }
  void releaseSaved() override {
    self_.reset();
    tensor_.reset();
  }
  std::vector<std::pair<std::string, Tensor>> savedTensors() const override {
    return {{"self", self_.get()}, {"tensor", tensor_.get()}};
  }

 private:
  SavedTensor self_, tensor_;
};

Tensor recordProduct(Tensor out, bool batched, const Tensor& self, const Tensor& mat2) {
  if (anyRequiresGrad({&self, &mat2})) {
    auto node = std::make_shared<MatProductBackward>(batched, self, mat2, self.requiresGrad(),
                                                     mat2.requiresGrad());
    node->nextEdges = {gradientEdge(self), gradientEdge(mat2)};
    setHistory(out, node);
  }
  return out;
}

void checkSameDTypeAndDevice(const Tensor& a, const Tensor& b, const char* op) {
  // PyTorch's CPU kernels: "expected scalar type Float but found Double"
  if (a.dtype() != b.dtype())
    throw std::invalid_argument("expected scalar type " + std::string(scalarTypeName(a.dtype())) +
                                " but found " + std::string(scalarTypeName(b.dtype())));
  if (a.device() != b.device())
    throw std::invalid_argument(std::string("expected ") + op +
                                " operands to be on the same device");
}

/// should_fold (PyTorch 2.x): fold the larger operand into a matrix and call mm, when the
/// other is a vector or matrix and either it requires grad or the fold is a free view.
bool shouldFold(const Tensor& t1, const Tensor& t2) {
  const bool t1Larger = t1.dim() >= t2.dim();
  const Tensor big = t1Larger ? t1 : mT(t2);
  const int64_t dimBig = big.dim();
  const int64_t dimSmall = t1Larger ? t2.dim() : t1.dim();
  if (!(dimBig >= 3 && (dimSmall == 1 || dimSmall == 2))) return false;
  const bool smallRequiresGrad = t1Larger ? t2.requiresGrad() : t1.requiresGrad();
  if (smallRequiresGrad && GradMode::isEnabled()) return true;
  if (t1.dim() == 2) return false;
  if (big.numel() == 0) return true;
  for (int64_t i = 0; i < dimBig - 2; ++i)
    if (big.stride(i) != big.stride(i + 1) * big.size(i + 1)) return false;
  return true;
}

/// at::dot of two 1-d tensors of the same size: a 0-dim result, DotBackward0.
Tensor dot(const Tensor& self, const Tensor& tensor) {
  checkSameDTypeAndDevice(self, tensor, "dot");
  Tensor out3;
  {
    NoGradGuard noGrad;
    out3 = product3d(view(self, {1, 1, self.size(0)}), view(tensor, {1, tensor.size(0), 1}), "dot");
  }
  Tensor out = makeView(out3, {}, {}, 0);
  if (anyRequiresGrad({&self, &tensor})) {
    auto node =
        std::make_shared<DotBackward>(self, tensor, self.requiresGrad(), tensor.requiresGrad());
    node->nextEdges = {gradientEdge(self), gradientEdge(tensor)};
    setHistory(out, node);
  }
  return out;
}

}  // namespace

Tensor mm(const Tensor& self, const Tensor& mat2) {
  if (self.dim() != 2) throw std::invalid_argument("self must be a matrix");
  if (mat2.dim() != 2) throw std::invalid_argument("mat2 must be a matrix");
  if (self.size(1) != mat2.size(0))
    throw std::invalid_argument("mat1 and mat2 shapes cannot be multiplied (" + dims(self) +
                                " and " + dims(mat2) + ")");
  checkSameDTypeAndDevice(self, mat2, "mm");
  countFlops("aten.mm", mmFlops(self.size(0), self.size(1), mat2.size(1)));
  Tensor out;
  {
    NoGradGuard noGrad;
    out = product2d(self, mat2);
  }
  return recordProduct(out, false, self, mat2);
}

Tensor bmm(const Tensor& self, const Tensor& mat2) {
  if (self.dim() != 3) throw std::invalid_argument("batch1 must be a 3D tensor");
  if (mat2.dim() != 3) throw std::invalid_argument("batch2 must be a 3D tensor");
  if (self.size(0) != mat2.size(0) || self.size(2) != mat2.size(1))
    throw std::invalid_argument("Expected size for first two dimensions of batch2 tensor to be: [" +
                                std::to_string(self.size(0)) + ", " + std::to_string(self.size(2)) +
                                "] but got: [" + std::to_string(mat2.size(0)) + ", " +
                                std::to_string(mat2.size(1)) + "].");
  checkSameDTypeAndDevice(self, mat2, "bmm");
  countFlops("aten.bmm", bmmFlops(self.size(0), self.size(1), self.size(2), mat2.size(2)));
  Tensor out;
  {
    NoGradGuard noGrad;
    out = product3d(self, mat2, "bmm");
  }
  return recordProduct(out, true, self, mat2);
}

Tensor matmul(const Tensor& t1, const Tensor& t2) {
  const int64_t d1 = t1.dim(), d2 = t2.dim();
  if (d1 == 0 || d2 == 0)
    throw std::invalid_argument("both arguments to matmul need to be at least 1D, but they are " +
                                std::to_string(d1) + "D and " + std::to_string(d2) + "D");
  // No size check here, as in PyTorch's _matmul_impl: dot, mv, mm and bmm each raise their own.
  if (d1 == 1 && d2 == 1 && t1.size(0) != t2.size(0))
    throw std::invalid_argument(
        "inconsistent tensor size, expected tensor [" + std::to_string(t1.size(0)) + "] and src [" +
        std::to_string(t2.size(0)) + "] to have the same number of elements, but got " +
        std::to_string(t1.size(0)) + " and " + std::to_string(t2.size(0)) +
        " elements respectively");
  if (d1 == 2 && d2 == 1 && t1.size(1) != t2.size(0))
    throw std::invalid_argument("size mismatch, got " + std::to_string(t1.size(0)) + ", " +
                                dims(t1) + "," + dims(t2));
  if (d1 == 1 && d2 == 1) return dot(t1, t2);
  if (d1 == 2 && d2 == 1) {  // aten.mv, which PyTorch's flop counter does not count
    FlopsNotCounted mv;
    return squeeze(mm(t1, unsqueeze(t2, 1)), 1);
  }
  // PyTorch 1.13: tensor1.unsqueeze(0).mm(tensor2).squeeze_(0)
  if (d1 == 1 && d2 == 2) return squeezeResult(mm(unsqueeze(t1, 0), t2), 0);
  if (d1 == 2 && d2 == 2) return mm(t1, t2);

  if (shouldFold(t1, t2)) {
    const bool transposed = d2 > d1;
    const Tensor big = transposed ? mT(t2) : t1;
    const Tensor small = !transposed ? t2 : (d1 == 2 ? transpose(t1, 0, 1) : t1);
    Shape outputShape(big.sizes().begin(), big.sizes().end() - 1);
    const int64_t folded = numelOf(outputShape);
    const Tensor bigFolded = reshape(big, {folded, big.size(-1)});  // a view unless it cannot be
    if (small.dim() == 2) {
      outputShape.push_back(small.size(1));
      Tensor out = unsafeView(mm(bigFolded, small), outputShape);
      return transposed ? contiguous(mT(out)) : out;
    }
    FlopsNotCounted mv;  // PyTorch: t1_folded.mv(t2), not counted by its flop counter
    return unsafeView(squeeze(mm(bigFolded, unsqueeze(small, 1)), 1), outputShape);
  }

  // Broadcast the batch dims, expand both to 3-d and call bmm.
  const int64_t n = d1 > 1 ? t1.size(-2) : 1;
  const int64_t m1 = t1.size(-1);
  const Shape batch1(t1.sizes().begin(), t1.sizes().end() - std::min<int64_t>(d1, 2));
  const int64_t m2 = d2 > 1 ? t2.size(-2) : t2.size(0);
  const int64_t p = d2 > 1 ? t2.size(-1) : 1;
  const Shape batch2(t2.sizes().begin(), t2.sizes().end() - std::min<int64_t>(d2, 2));
  Shape outputShape = broadcastShapes(batch1, batch2);
  const int64_t batchProduct = numelOf(outputShape);

  Shape t1Size = outputShape;
  t1Size.insert(t1Size.end(), {n, m1});
  const Tensor t1Expanded = reshape(expand(t1, t1Size), {batchProduct, n, m1});
  const bool vectorRhs = d2 == 1;
  Shape t2Size = outputShape;
  if (vectorRhs)
    t2Size.push_back(m2);
  else
    t2Size.insert(t2Size.end(), {m2, p});
  Tensor t2Expanded = expand(t2, t2Size);
  if (vectorRhs) t2Expanded = unsqueeze(t2Expanded, -1);
  t2Expanded = reshape(t2Expanded, {batchProduct, m2, p});
  if (d1 > 1) outputShape.push_back(n);
  if (d2 > 1) outputShape.push_back(p);
  Tensor out = bmm(t1Expanded, t2Expanded);
  if (vectorRhs) out = squeeze(out, -1);
  return unsafeView(out, outputShape);
}

}  // namespace matmulviz
