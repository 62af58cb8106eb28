// torch.softmax(t, dim) (aten/src/ATen/native/SoftMax.cpp: _softmax) and SoftmaxBackward0
// (tools/autograd/derivatives.yaml: _softmax_backward_data(grad, result, dim, self.scalar_type()),
// which on CUDA allocates only the input's gradient).
#include "core/autograd/grad_mode.h"
#include "core/autograd/node.h"
#include "core/memory/kernel_temporaries.h"
#include "core/ops/pointwise_kernels.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace matmulviz {

namespace {

/// out = softmax(t) along dim; out contiguous of t's sizes, float dtype.
void softmaxForward(const Tensor& out, const Tensor& t, int64_t dim) {
  const int64_t n = t.size(dim), st = t.stride(dim), so = out.stride(dim);
  std::vector<double> e(static_cast<size_t>(n));
  detail::dispatchFloating(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using Acc = typename T::Acc;
    const void* pt = t.dataPtr();
    void* po = out.dataPtr();
    detail::forEachSlice(out, t, dim, [&](int64_t oo, int64_t ot) {
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t i = 0; i < n; ++i)
        m = std::max(m, static_cast<double>(T::load(pt, ot + i * st)));
      double sum = 0;
      for (int64_t i = 0; i < n; ++i) {
        e[i] = std::exp(static_cast<double>(T::load(pt, ot + i * st)) - m);
        sum += e[i];
      }
      for (int64_t i = 0; i < n; ++i) T::store(po, oo + i * so, static_cast<Acc>(e[i] / sum));
    });
  });
}

/// gradInput = result * (grad - sum(grad * result, dim)), computed in float64 per slice.
Tensor softmaxBackwardData(const Tensor& g, const Tensor& result, int64_t dim) {
  OpScope op(g.device(), "_softmax_backward_data");
  Tensor out =
      empty(g.sizes(), result.dtype(), g.storage().devicePtr(), "_softmax_backward_data output");
  if (DeviceContext* device = g.device())
    replayTemporaries(device->allocator(),
                      softmaxBackwardTemporaries(g.numel(), elementSize(g.dtype())));
  if (!out.hasData() || !g.hasData() || !result.hasData() || out.numel() == 0) return out;
  detail::requireHostCompute(out, "_softmax_backward_data");
  NoGradGuard noGrad;
  copyInto(out, g);      // out now holds grad (contiguous), result read in place
  if (out.dim() == 0) {  // one value: result 1, gradient 1 * (g - g) = 0
    detail::mapInPlace(out, [](auto x) { return x - x; });
    return out;
  }
  const int64_t n = out.size(dim), so = out.stride(dim), sr = result.stride(dim);
  detail::dispatchFloating(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using Acc = typename T::Acc;
    void* po = out.dataPtr();
    const void* pr = result.dataPtr();
    detail::forEachSlice(out, result, dim, [&](int64_t oo, int64_t orr) {
      double dot = 0;
      for (int64_t i = 0; i < n; ++i)
        dot += static_cast<double>(T::load(po, oo + i * so)) *
               static_cast<double>(T::load(pr, orr + i * sr));
      for (int64_t i = 0; i < n; ++i) {
        const double r = T::load(pr, orr + i * sr);
        T::store(po, oo + i * so,
                 static_cast<Acc>(r * (static_cast<double>(T::load(po, oo + i * so)) - dot)));
      }
    });
  });
  return out;
}

class SoftmaxBackward final : public Node {
 public:
  SoftmaxBackward(Tensor result, const Tensor& t, int64_t dim)
      : result_(std::move(result), savedWhy("result", "SoftmaxBackward0", t)), dim_(dim) {
    result_.setProducer("SoftmaxBackward0");
  }
  std::string name() const override { return "SoftmaxBackward0"; }
  TensorList apply(TensorList&& g) override {
    if (!g[0].defined()) return {Tensor()};
    return {softmaxBackwardData(g[0], result_.get(), dim_)};
  }
  void releaseSaved() override { result_.reset(); }
  std::vector<std::pair<std::string, Tensor>> savedTensors() const override {
    return {{"result", result_.get()}};
  }

 private:
  SavedTensor result_;
  int64_t dim_;
};

}  // namespace

Tensor softmax(const Tensor& t, int64_t dim) {
  const int64_t d = wrapDim(dim, std::max<int64_t>(t.dim(), 1));
  if (!isFloating(t.dtype()))
    throw std::invalid_argument(std::string(t.dim() > 0 && d == t.dim() - 1
                                                ? "\"softmax_lastdim_kernel_impl\""
                                                : "\"softmax_kernel_impl\"") +
                                " not implemented for 'Long'");
  OpScope op(t.device(), "softmax");
  Tensor out = empty(t.sizes(), t.dtype(), t.storage().devicePtr(), "softmax output");
  if (out.hasData() && t.hasData() && out.numel() > 0) {
    detail::requireHostCompute(out, "softmax");
    if (t.dim() == 0)
      detail::mapInPlace(out, [](auto x) { return x - x + 1; });  // one value (NaN stays)
    else
      softmaxForward(out, t, d);
  }
  if (anyRequiresGrad({&t})) {
    auto node = std::make_shared<SoftmaxBackward>(detail::savedOutput(out), t, d);
    node->nextEdges = {gradientEdge(t)};
    setHistory(out, node);
  }
  return out;
}

Tensor amax(const Tensor& t, int64_t dim, bool keepdim) {
  if (t.dim() == 0) throw std::out_of_range("amax: a 0-dim tensor has no dim to reduce");
  const int64_t d = wrapDim(dim, t.dim());
  if (!isFloating(t.dtype()))
    throw std::invalid_argument("amax: matmulviz reduces float tensors only");
  if (t.size(d) == 0)
    throw std::invalid_argument("amax(): Expected reduction dim " + std::to_string(d) +
                                " to have non-zero size.");  // PyTorch's zero_numel_check_dims text
  Shape kept = t.sizes(), outSizes;
  kept[d] = 1;
  for (int64_t i = 0; i < t.dim(); ++i)
    if (i != d || keepdim) outSizes.push_back(kept[i]);
  OpScope op(t.device(), "amax");
  Tensor out = empty(kept, t.dtype(), t.storage().devicePtr(), "amax output");
  if (out.hasData() && t.hasData() && out.numel() > 0) {
    detail::requireHostCompute(out, "amax");
    const int64_t n = t.size(d), st = t.stride(d);
    detail::dispatchFloating(out.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const void* pt = t.dataPtr();
      void* po = out.dataPtr();
      detail::forEachSlice(out, t, d, [&](int64_t oo, int64_t ot) {
        auto m = T::load(pt, ot);
        for (int64_t i = 1; i < n && !std::isnan(static_cast<double>(m)); ++i) {
          const auto x = T::load(pt, ot + i * st);
          if (std::isnan(static_cast<double>(x)) || x > m) m = x;
        }
        T::store(po, oo, m);
      });
    });
  }
  return makeView(out, outSizes, contiguousStrides(outSizes), 0);
}

}  // namespace matmulviz
