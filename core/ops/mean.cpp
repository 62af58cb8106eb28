// t.mean() and t.mean(dims, keepdim) (aten/src/ATen/native/ReduceOps.cpp: on CUDA one reduction
// kernel writing only the output) and MeanBackward0 / MeanBackward1
// (tools/autograd/derivatives.yaml: grad.expand(self.sizes()) / self.numel(), and
// sum_backward(grad, sizes, dim, keepdim) / n; one allocation each).
#include "core/autograd/grad_mode.h"
#include "core/autograd/node.h"
#include "core/ops/pointwise_kernels.h"

#include <limits>
#include <vector>

namespace matmulviz {

namespace {

class MeanBackward final : public Node {
 public:
  MeanBackward(bool all, Shape inputSizes, std::vector<int64_t> dims, bool keepdim, int64_t n)
      : all_(all),
        inputSizes_(std::move(inputSizes)),
        dims_(std::move(dims)),
        keepdim_(keepdim),
        n_(n) {}
  std::string name() const override { return all_ ? "MeanBackward0" : "MeanBackward1"; }
  TensorList apply(TensorList&& g) override {
    if (!g[0].defined()) return {Tensor()};
    Tensor grad = g[0];
    if (!all_ && !keepdim_)
      for (int64_t d : dims_) grad = unsqueeze(grad, d);  // dims_ ascending
    return {divScalar(expand(grad, inputSizes_), {static_cast<double>(n_), true})};
  }

 private:
  bool all_;
  Shape inputSizes_;
  std::vector<int64_t> dims_;
  bool keepdim_;
  int64_t n_;
};

Tensor meanImpl(const Tensor& t, std::vector<bool> reduced, bool keepdim, bool all) {
  if (!isFloating(t.dtype()))
    throw std::invalid_argument(
        "mean(): could not infer output dtype. Input dtype must be either a floating point or "
        "complex dtype. Got: Long");
  const int64_t nd = t.dim();
  Shape outSizes, outStrides(static_cast<size_t>(nd), 0);
  std::vector<int64_t> dims;
  int64_t count = 1;
  for (int64_t d = 0; d < nd; ++d) {
    if (reduced[d]) {
      dims.push_back(d);
      count *= t.size(d);
      if (keepdim) outSizes.push_back(1);
    } else {
      outSizes.push_back(t.size(d));
    }
  }
  OpScope op(t.device(), "mean");
  Tensor out = empty(outSizes, t.dtype(), t.storage().devicePtr(), "mean output");
  detail::replayReductionTemporaries(t, reduced);
  if (out.hasData() && t.hasData() && out.numel() > 0) {
    detail::requireHostCompute(out, "mean");
    // out's strides seen from t's index space: 0 on the reduced dims.
    const Shape contiguous = contiguousStrides(outSizes);
    for (int64_t d = 0, o = 0; d < nd; ++d) {
      if (reduced[d] && !keepdim) continue;
      if (!reduced[d]) outStrides[d] = contiguous[o];
      ++o;
    }
    std::vector<double> acc(static_cast<size_t>(out.numel()), 0.0);
    detail::dispatchFloating(t.dtype(), [&](auto tag) {
      using T = decltype(tag);
      using Acc = typename T::Acc;
      const void* pt = t.dataPtr();
      detail::forEachRun(t.sizes(), outStrides, t.strides(),
                         [&](int64_t oo, int64_t ot, int64_t n, int64_t so, int64_t st) {
                           for (int64_t i = 0; i < n; ++i)
                             acc[oo + i * so] += T::load(pt, ot + i * st);
                         });
      const double nan = std::numeric_limits<double>::quiet_NaN();
      for (size_t i = 0; i < acc.size(); ++i)
        T::store(out.dataPtr(), static_cast<int64_t>(i),
                 static_cast<Acc>(count == 0 ? nan : acc[i] / static_cast<double>(count)));
    });
  }
  if (anyRequiresGrad({&t})) {
    auto node = std::make_shared<MeanBackward>(all, t.sizes(), std::move(dims), keepdim, count);
    node->nextEdges = {gradientEdge(t)};
    setHistory(out, node);
  }
  return out;
}

}  // namespace

Tensor mean(const Tensor& t) {
  return meanImpl(t, std::vector<bool>(static_cast<size_t>(t.dim()), true), false, true);
}

Tensor meanDims(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim) {
  const int64_t nd = t.dim();
  std::vector<bool> reduced(static_cast<size_t>(nd), dims.empty());
  for (int64_t d : dims) {
    const int64_t w = wrapDim(d, std::max<int64_t>(nd, 1));
    if (nd == 0) continue;  // a 0-dim tensor reduces over dim 0 / -1 as over nothing
    if (reduced[w])
      throw std::invalid_argument("dim " + std::to_string(w) +
                                  " appears multiple times in the list of dims");
    reduced[w] = true;
  }
  return meanImpl(t, std::move(reduced), keepdim, false);
}

}  // namespace matmulviz
