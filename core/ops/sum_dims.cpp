// t.sum(dims, keepdim) (aten/src/ATen/native/ReduceOps.cpp) and SumBackward1
// (tools/autograd/derivatives.yaml: sum_backward, unsqueeze then expand).
#include "core/autograd/grad_mode.h"
#include "core/autograd/node.h"
#include "core/ops/ops.h"
#include "core/ops/shape_rules.h"

#include <stdexcept>

namespace matmulviz {

namespace {

class SumDimsBackward final : public Node {
 public:
  SumDimsBackward(Shape inputSizes, std::vector<int64_t> dims, bool keepdim)
      : inputSizes_(std::move(inputSizes)), dims_(std::move(dims)), keepdim_(keepdim) {}
  std::string name() const override { return "SumBackward1"; }
  TensorList apply(TensorList&& g) override {
    Tensor grad = g[0];
    if (!keepdim_)
      for (int64_t d : dims_) grad = unsqueeze(grad, d);  // dims_ ascending
    return {expand(grad, inputSizes_)};
  }

 private:
  Shape inputSizes_;
  std::vector<int64_t> dims_;
  bool keepdim_;
};

}  // namespace

Tensor sumDims(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim) {
  const int64_t nd = t.dim();
  std::vector<bool> summed(static_cast<size_t>(nd), false);
  for (int64_t d : dims) {
    const int64_t w = wrapDim(d, nd);
    if (summed[w])
      throw std::invalid_argument("dim " + std::to_string(w) +
                                  " appears multiple times in the list of dims");
    summed[w] = true;
  }
  Shape keptSizes = t.sizes(), outSizes;
  std::vector<int64_t> sortedDims;
  for (int64_t d = 0; d < nd; ++d) {
    if (summed[d]) {
      keptSizes[d] = 1;
      sortedDims.push_back(d);
    }
    if (!summed[d] || keepdim) outSizes.push_back(keptSizes[d]);
  }
  Tensor kept;
  {
    NoGradGuard noGrad;
    OpScope op(t.device(), "sum");
    // An int64 or bool input sums into a new int64 tensor also when nothing is reduced.
    kept = keptSizes == t.sizes() && isFloating(t.dtype()) ? clone(t, MemoryFormat::Contiguous)
                                                           : sumTo(t, keptSizes);
  }
  Tensor out = makeView(kept, outSizes, contiguousStrides(outSizes), 0);
  if (anyRequiresGrad({&t})) {
    auto node = std::make_shared<SumDimsBackward>(t.sizes(), sortedDims, keepdim);
    node->nextEdges = {gradientEdge(t)};
    setHistory(out, node);
  }
  return out;
}

}  // namespace matmulviz
