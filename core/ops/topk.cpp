// torch.topk (aten/src/ATen/native/TopKImpl.h, Sorting.cpp) and TopkBackward0
// (tools/autograd/derivatives.yaml: value_selecting_reduction_backward(grad, dim, indices,
// self.sizes(), true): the gradient scattered into zeros of self's shape).
#include "core/autograd/grad_mode.h"
#include "core/autograd/node.h"
#include "core/memory/kernel_temporaries.h"
#include "core/ops/pointwise_kernels.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace matmulviz {

namespace {

/// zeros(sizes).scatter_(dim, indices, g): one allocation, g's dtype and device.
Tensor scatterIntoZeros(const Tensor& g, const Tensor& indices, const Shape& sizes, int64_t dim) {
  OpScope op(g.device(), "value_selecting_reduction_backward");
  Tensor out = zeros(sizes, g.dtype(), g.storage().devicePtr(), "topk grad");
  if (!out.hasData() || !g.hasData() || !indices.hasData() || g.numel() == 0) return out;
  detail::requireHostCompute(out, "topk backward");
  if (out.dim() == 0) {
    copyInto(out, g);
    return out;
  }
  const int64_t k = g.size(dim), sg = g.stride(dim), si = indices.stride(dim);
  const int64_t so = out.stride(dim);
  const auto* pi = static_cast<const int64_t*>(indices.dataPtr());
  detail::dispatchFloating(g.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const void* pg = g.dataPtr();
    void* po = out.dataPtr();
    // Walk g and indices together (same sizes); out by the slice's multi-index.
    detail::forEachSlice(g, indices, dim, [&](int64_t og, int64_t oi) {
      // The slice's position in the other dims, recovered from indices' contiguous offset.
      int64_t rest = oi, oBase = 0;
      for (int64_t d = 0; d < g.dim(); ++d) {
        const int64_t idx = rest / indices.stride(d);
        rest -= idx * indices.stride(d);
        if (d != dim) oBase += idx * out.stride(d);
      }
      for (int64_t j = 0; j < k; ++j)
        T::store(po, oBase + pi[oi + j * si] * so, T::load(pg, og + j * sg));
    });
  });
  return out;
}

class TopkBackward final : public Node {
 public:
  TopkBackward(Tensor indices, const Tensor& t, int64_t dim)
      : indices_(std::move(indices), savedWhy("indices", "TopkBackward0", t)),
        sizes_(t.sizes()),
        dim_(dim) {}
  std::string name() const override { return "TopkBackward0"; }
  TensorList apply(TensorList&& g) override {
    if (!g[0].defined()) return {Tensor()};
    return {scatterIntoZeros(g[0], indices_.get(), sizes_, dim_)};
  }
  void releaseSaved() override { indices_.reset(); }
  std::vector<std::pair<std::string, Tensor>> savedTensors() const override {
    return {{"indices", indices_.get()}};
  }

 private:
  SavedTensor indices_;
  Shape sizes_;
  int64_t dim_;
};

}  // namespace

std::pair<Tensor, Tensor> topk(const Tensor& t, int64_t k, int64_t dim, bool largest, bool sorted) {
  (void)sorted;  // always sorted: PyTorch allows any order for sorted=False
  const int64_t d = wrapDim(dim, std::max<int64_t>(t.dim(), 1));
  const int64_t n = t.dim() == 0 ? 1 : t.size(d);
  if (k < 0 || k > n) throw std::invalid_argument("selected index k out of range");
  Shape sizes = t.sizes();
  if (t.dim() > 0) sizes[d] = k;
  OpScope op(t.device(), "topk");
  Tensor values = empty(sizes, t.dtype(), t.storage().devicePtr(), "topk values");
  Tensor indices = empty(sizes, DType::Int64, t.storage().devicePtr(), "topk indices");
  if (DeviceContext* device = t.device(); device && n > 0)
    replayTemporaries(device->allocator(),
                      topkTemporaries(t.numel() / n, n, elementSize(t.dtype()),
                                      device->allocator().options().pytorch.architecture()));
  if (values.hasData() && t.hasData() && values.numel() > 0) {
    detail::requireHostCompute(values, "topk");
    auto* pi = static_cast<int64_t*>(indices.dataPtr());
    if (t.dim() == 0) {
      copyInto(values, t);
      pi[0] = 0;
    } else {
      detail::dispatchArithmetic(t.dtype(), [&](auto tag) {
        using T = decltype(tag);
        using Acc = typename T::Acc;
        const void* pt = t.dataPtr();
        void* pv = values.dataPtr();
        const int64_t st = t.stride(d), sv = values.stride(d), si = indices.stride(d);
        std::vector<std::pair<Acc, int64_t>> row(static_cast<size_t>(n));
        // NaN counts as the largest value, as in PyTorch; ties keep the lower index first.
        auto before = [largest](const std::pair<Acc, int64_t>& x,
                                const std::pair<Acc, int64_t>& y) {
          const bool xn = x.first != x.first, yn = y.first != y.first;
          if (xn || yn) {
            if (xn && yn) return x.second < y.second;
            return largest ? xn : yn;
          }
          if (x.first != y.first) return largest ? x.first > y.first : x.first < y.first;
          return x.second < y.second;
        };
        detail::forEachSlice(values, t, d, [&](int64_t ov, int64_t ot) {
          for (int64_t i = 0; i < n; ++i) row[i] = {T::load(pt, ot + i * st), i};
          std::partial_sort(row.begin(), row.begin() + k, row.end(), before);
          // values and indices are both contiguous with the same sizes: same offsets
          for (int64_t j = 0; j < k; ++j) {
            T::store(pv, ov + j * sv, row[j].first);
            pi[ov + j * si] = row[j].second;
          }
        });
      });
    }
  }
  if (anyRequiresGrad({&t})) {
    auto node = std::make_shared<TopkBackward>(indices, t, d);
    node->nextEdges = {gradientEdge(t)};
    setHistory(values, node);
  }
  return {values, indices};
}

}  // namespace matmulviz
