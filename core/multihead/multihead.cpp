// The multi-head matmul assignment: matmul_with_multi_head and matmul_with_importance on the
// engine's ops.
#include "core/multihead/multihead.h"

#include "core/autograd/grad_mode.h"
#include "core/ops/ops.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace matmulviz {

namespace {

/// Sets grad mode for its lifetime and restores the previous one (torch.enable_grad /
/// torch.no_grad as a context manager).
class GradModeGuard {
 public:
  explicit GradModeGuard(bool enabled) : previous_(GradMode::isEnabled()) {
    GradMode::setEnabled(enabled);
  }
  ~GradModeGuard() { GradMode::setEnabled(previous_); }
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  bool previous_;
};

/// A new leaf on the same storage (x.detach()): no history, requires_grad off, no grad.
Tensor detachedAlias(const Tensor& t) {
  return makeView(t, t.sizes(), t.strides(), t.storageOffset());
}

void checkFloating(const Tensor& t, const char* name) {
  if (!t.defined()) throw std::invalid_argument(std::string(name) + ": no tensor given");
  if (!isFloating(t.dtype()))
    throw std::invalid_argument(std::string(name) + ": expected a floating point tensor, got " +
                                std::string(dtypeName(t.dtype())));
}

void checkMultiHeadArgs(const Tensor& A, int64_t rankA, const Tensor& W1, int64_t numHeads) {
  checkFloating(A, "A1");
  checkFloating(W1, "W1");
  if (A.dim() != rankA)
    throw std::invalid_argument("A1: expected a " + std::to_string(rankA) +
                                "-d tensor [b, s, h], got shape " + A.shapeString());
  if (W1.dim() != 2)
    throw std::invalid_argument("W1: expected a 2-d tensor [h, e], got shape " + W1.shapeString());
  const int64_t h = A.size(-1);
  if (W1.size(0) != h)
    throw std::invalid_argument("W1: expected " + std::to_string(h) +
                                " rows (A1's hidden size h) but got shape " + W1.shapeString());
  if (A.dtype() != W1.dtype())
    throw std::invalid_argument("W1: dtype " + std::string(dtypeName(W1.dtype())) +
                                " differs from A1's " + std::string(dtypeName(A.dtype())));
  if (A.device() != W1.device()) throw std::invalid_argument("W1: expected the same device as A1");
  if (numHeads < 1)
    throw std::invalid_argument("num_heads: must be at least 1, got " + std::to_string(numHeads));
  if (h % numHeads != 0)
    throw std::invalid_argument("num_heads: " + std::to_string(numHeads) +
                                " does not divide the hidden size h = " + std::to_string(h));
}

/// rows: [r, h] (any strides) -> [r, nh, e] through one bmm over the heads (see the header).
Tensor multiHeadRows(const Tensor& rows, const Tensor& W1, int64_t numHeads) {
  const int64_t r = rows.size(0), h = rows.size(1), e = W1.size(1), hd = h / numHeads;
  const Tensor A2 = view(rows, {r, numHeads, hd});   // [r, nh, hd]
  const Tensor A2h = permute(A2, {1, 0, 2});         // [nh, r, hd], ld h
  const Tensor W2 = reshape(W1, {numHeads, hd, e});  // [nh, hd, e]
  const Tensor O = bmm(A2h, W2);                     // [nh, r, e]
  return permute(O, {1, 0, 2});                      // [r, nh, e]
}

/// A value as P's dtype holds it (a Python float compared with a tensor is cast to its dtype).
double roundToDType(double v, DType dtype) {
  alignas(8) unsigned char buf[8];
  storeFromDouble(buf, dtype, 0, v);
  return loadAsDouble(buf, dtype, 0);
}

/// Row `row`'s top-k positions: value descending, NaN first, lower index first among equals.
std::vector<int64_t> topKPositions(const std::vector<double>& p, int64_t row, int64_t s,
                                   int64_t k) {
  std::vector<int64_t> order(static_cast<size_t>(s));
  std::iota(order.begin(), order.end(), int64_t{0});
  const double* v = p.data() + row * s;
  const auto rank = [](double x) { return std::isnan(x) ? INFINITY : x; };
  std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
    const bool nx = std::isnan(v[x]), ny = std::isnan(v[y]);
    if (nx != ny) return nx;
    return rank(v[x]) > rank(v[y]);
  });
  order.resize(static_cast<size_t>(k));
  return order;
}

}  // namespace

Tensor matmulWithMultiHead(const Tensor& A1, const Tensor& W1, int64_t numHeads) {
  checkMultiHeadArgs(A1, 3, W1, numHeads);
  const int64_t b = A1.size(0), s = A1.size(1), h = A1.size(2), e = W1.size(1);
  OpScope op(A1.device(), "matmul_with_multi_head");
  // [b, s, h] -> [b*s, h]: a view when b and s merge (always for a contiguous A1).
  const Tensor rows = reshape(A1, {b * s, h});
  const Tensor O = multiHeadRows(rows, W1, numHeads);  // [b*s, nh, e], a view of [nh, b*s, e]
  return view(O, {b, s, numHeads, e});
}

std::vector<uint8_t> importanceMask(const Tensor& P, double topP, std::optional<int64_t> topK) {
  checkFloating(P, "P");
  if (P.dim() != 2)
    throw std::invalid_argument("P: expected a 2-d tensor [b, s], got shape " + P.shapeString());
  if (!(topP >= 0.0 && topP <= 1.0))
    throw std::invalid_argument("top_p: " + std::to_string(topP) + " is outside [0, 1]");
  const int64_t b = P.size(0), s = P.size(1);
  const int64_t k = topK.value_or(s);
  if (topK && (k < 1 || k > s))
    throw std::invalid_argument("top_k: " + std::to_string(k) + " is outside [1, s] = [1, " +
                                std::to_string(s) + "]");
  if (!P.hasData()) throw std::invalid_argument("P: has no data (meta device)");
  const std::vector<double> p = hostReadable(P, "P on the host").toDoubles();  // mask: host
  const double threshold = roundToDType(topP, P.dtype());
  std::vector<uint8_t> mask(static_cast<size_t>(b * s), 0);
  for (int64_t i = 0; i < b; ++i)
    for (int64_t j : topKPositions(p, i, s, k))
      mask[i * s + j] = p[i * s + j] >= threshold ? 1 : 0;  // NaN >= x is false
  return mask;
}

ImportanceResult matmulWithImportance(const Tensor& A1, const Tensor& P, const Tensor& W1,
                                      int64_t numHeads, double topP, std::optional<int64_t> topK,
                                      const Tensor& gradOutput,
                                      const std::function<void()>& afterForward) {
  checkMultiHeadArgs(A1, 3, W1, numHeads);
  checkFloating(P, "P");
  const int64_t b = A1.size(0), s = A1.size(1), h = A1.size(2), e = W1.size(1);
  if (P.sizes() != Shape{b, s})
    throw std::invalid_argument("P: expected shape " + shapeToString({b, s}) +
                                " (A1's [b, s]) but got " + P.shapeString());
  if (P.device() != A1.device()) throw std::invalid_argument("P: expected the same device as A1");
  ImportanceResult r;
  r.mask = importanceMask(P, topP, topK);
  for (int64_t x = 0; x < b * s; ++x)
    if (r.mask[x]) r.selectedTokens.push_back(x);
  const auto t = static_cast<int64_t>(r.selectedTokens.size());
  const bool backward = gradOutput.defined();
  if (backward) {
    if (gradOutput.sizes() != Shape{t, numHeads, e})
      throw std::invalid_argument("grad_output: expected shape " + shapeToString({t, numHeads, e}) +
                                  " (O3's [t, nh, e]) but got " + gradOutput.shapeString());
    if (gradOutput.dtype() != A1.dtype())
      throw std::invalid_argument("grad_output: dtype " +
                                  std::string(dtypeName(gradOutput.dtype())) +
                                  " differs from A1's " + std::string(dtypeName(A1.dtype())));
    if (gradOutput.device() != A1.device())
      throw std::invalid_argument("grad_output: expected the same device as A1");
  }

  GradModeGuard gradMode(backward);
  const Tensor a = backward ? detachedAlias(A1).setRequiresGrad(true) : A1;
  const Tensor w = backward ? detachedAlias(W1).setRequiresGrad(true) : W1;
  Tensor O3;
  {
    OpScope op(A1.device(), "matmul_with_importance");
    const Tensor tokens = fromDoubles(
        {t}, std::vector<double>(r.selectedTokens.begin(), r.selectedTokens.end()), DType::Int64);
    const Tensor A3 = index(reshape(a, {b * s, h}), tokens);  // [t, h]
    if (A3.storage().label() == "indexed copy")
      A3.setLabel("A3 = A1[mask]").setCategory(MemoryCategory::GatheredCopy);
    O3 = multiHeadRows(A3, w, numHeads);  // [t, nh, e]
  }
  if (afterForward) afterForward();
  if (backward) {
    {
      OpScope op(A1.device(), "backward");
      O3.backward(gradOutput);
    }
    r.dA1 = a.grad();
    r.dW1 = w.grad();
    if (!r.dA1.defined()) r.dA1 = zeros(A1.sizes(), A1.dtype(), A1.storage().devicePtr(), "dA1");
    if (!r.dW1.defined()) r.dW1 = zeros(W1.sizes(), W1.dtype(), W1.storage().devicePtr(), "dW1");
    r.dA1.setLabel("dA1").setCategory(MemoryCategory::Gradients);
    r.dW1.setLabel("dW1").setCategory(MemoryCategory::Gradients);
  }
  r.O3 = detachedAlias(O3);  // drops the graph with the last reference to O3's grad_fn
  r.O3.setLabel("O3").setCategory(MemoryCategory::Outputs);
  return r;
}

}  // namespace matmulviz
