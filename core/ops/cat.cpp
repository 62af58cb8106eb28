// torch.cat (aten/src/ATen/native/TensorShape.cpp). CatBackward0 saves only sizes and dtypes: its
// backward hands each input a narrow() view of the gradient, allocating nothing (a copy only for
// an input whose dtype was promoted, as the engine's validate_outputs casts it).
#include "core/autograd/grad_mode.h"
#include "core/autograd/node.h"
#include "core/ops/ops.h"
#include "core/ops/pointwise.h"
#include "core/ops/shape_rules.h"

#include <cstring>
#include <stdexcept>

namespace matmulviz {

namespace {

class CatBackward final : public Node {
 public:
  CatBackward(int64_t dim, std::vector<int64_t> lengths, std::vector<DType> dtypes)
      : dim_(dim), lengths_(std::move(lengths)), dtypes_(std::move(dtypes)) {}
  std::string name() const override { return "CatBackward0"; }
  TensorList apply(TensorList&& g) override {
    TensorList out(lengths_.size());
    int64_t start = 0;
    for (size_t i = 0; i < lengths_.size(); ++i) {
      if (needsInputGrad(i)) {
        const Tensor part = narrow(g[0], dim_, start, lengths_[i]);
        out[i] = part.dtype() == dtypes_[i] ? part : toDType(part, dtypes_[i]);
      }
      start += lengths_[i];
    }
    return out;
  }

 private:
  int64_t dim_;
  std::vector<int64_t> lengths_;
  std::vector<DType> dtypes_;
};

/// Copies the inputs into `out` when each is a dense row-major block of out's dtype in host
/// memory: per input, one memcpy per index of the dims before `dim` (PyTorch's contiguous cat
/// path), without a narrow() view per input. Returns false (nothing copied) otherwise.
bool copyDense(const Tensor& out, const std::vector<Tensor>& tensors, int64_t dim) {
  if (out.compute() || !out.isContiguous()) return false;
  for (const Tensor& t : tensors)
    if (t.compute() || t.dtype() != out.dtype() || !t.isContiguous()) return false;
  const Shape& sizes = out.sizes();
  int64_t outer = 1, inner = 1;  // elements before `dim`; after it, per unit of `dim`
  for (int64_t d = 0; d < dim; ++d) outer *= sizes[d];
  for (size_t d = static_cast<size_t>(dim) + 1; d < sizes.size(); ++d) inner *= sizes[d];
  const int64_t es = out.elementSize(), outRow = sizes[dim] * inner * es;
  char* dst = static_cast<char*>(out.dataPtr());
  int64_t offset = 0;  // bytes into each row of out
  for (const Tensor& t : tensors) {
    const int64_t chunk = t.sizes()[dim] * inner * es;
    const char* src = static_cast<const char*>(t.dataPtr());
    if (chunk > 0)
      for (int64_t o = 0; o < outer; ++o)
        std::memcpy(dst + o * outRow + offset, src + o * chunk, static_cast<size_t>(chunk));
    offset += chunk;
  }
  return true;
}

}  // namespace

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) {
  if (tensors.empty())
    throw std::invalid_argument("torch.cat(): expected a non-empty list of Tensors");
  const Tensor& first = tensors.front();
  const int64_t nd = first.dim();
  if (nd == 0)
    throw std::invalid_argument("zero-dimensional tensor (at position 0) cannot be concatenated");
  dim = wrapDim(dim, nd);
  Shape outSizes = first.sizes();
  outSizes[dim] = 0;
  std::vector<int64_t> lengths;
  lengths.reserve(tensors.size());
  std::vector<DType> dtypes;
  DType dtype = first.dtype();
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (t.dim() != nd)
      throw std::invalid_argument("Tensors must have same number of dimensions: got " +
                                  std::to_string(nd) + " and " + std::to_string(t.dim()));
    if (t.device() != first.device())
      throw std::invalid_argument(
          std::string("Expected all tensors to be on the same device, but found at least two "
                      "devices, ") +
          (first.device() ? "cuda:0" : "cpu") + " and " + (t.device() ? "cuda:0" : "cpu") + "!");
    dtype = promoteTypes(dtype, t.dtype());  // at::native::result_type(tensors)
    dtypes.push_back(t.dtype());
    for (int64_t d = 0; d < nd; ++d)
      if (d != dim && t.size(d) != first.size(d))
        throw std::invalid_argument("Sizes of tensors must match except in dimension " +
                                    std::to_string(dim) + ". Expected size " +
                                    std::to_string(first.size(d)) + " but got size " +
                                    std::to_string(t.size(d)) + " for tensor number " +
                                    std::to_string(i) + " in the list.");
    outSizes[dim] += t.size(dim);
    lengths.push_back(t.size(dim));
  }
  OpScope op(first.device(), "cat");
  Tensor out = empty(outSizes, dtype, first.storage().devicePtr(), "cat output");
  if (out.hasData() && !copyDense(out, tensors, dim)) {
    NoGradGuard noGrad;
    int64_t start = 0;
    for (const Tensor& t : tensors) {
      copyInto(narrow(out, dim, start, t.size(dim)), t);
      start += t.size(dim);
    }
  }
  if (anyRequiresGrad(tensors)) {
    auto node = std::make_shared<CatBackward>(dim, std::move(lengths), std::move(dtypes));
    for (const Tensor& t : tensors) node->nextEdges.push_back(gradientEdge(t));
    setHistory(out, node);
  }
  return out;
}

}  // namespace matmulviz
