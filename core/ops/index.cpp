// Advanced indexing along dim 0 (t[q]) and its backward (index_put_ with accumulate=True).
#include "core/autograd/grad_mode.h"
#include "core/autograd/node.h"
#include "core/ops/ops.h"
#include "core/ops/shape_rules.h"
#include "core/ops/strided_loop.h"

#include <cstring>
#include <optional>
#include <stdexcept>

namespace matmulviz {

namespace {

/// Checks every index against [-size, size) before anything is allocated.
void checkBounds(const Tensor& indices, int64_t size) {
  if (!indices.hasData()) return;
  const Tensor host = hostReadable(indices, "index on the host");
  const Tensor idx = host.isContiguous() ? host : clone(host, MemoryFormat::Contiguous);
  const auto* p = idx.data<int64_t>();
  for (int64_t i = 0, n = idx.numel(); i < n; ++i)
    if (p[i] < -size || p[i] >= size)
      throw std::out_of_range("index " + std::to_string(p[i]) +
                              " is out of bounds for dimension 0 with size " +
                              std::to_string(size));
}

/// The index as the gather sees it: copied to the device when it lives on the host and the
/// indexed tensor on a device (the copy is what PyTorch allocates; it dies after the op).
Tensor indexOnDevice(const Tensor& indices, const Tensor& self) {
  if (indices.deviceKind() != DeviceKind::Host || self.deviceKind() == DeviceKind::Host)
    return indices;
  return toDevice(indices, self.storage().devicePtr(), "index copied to the device");
}

int64_t rowElements(const Tensor& t) {
  return t.dim() == 0 ? 1 : t.numel() / std::max<int64_t>(t.size(0), 1);
}

/// Calls fn(i, row) for each position i of the flattened index with its (wrapped) row.
template <typename F>
void forEachIndex(const Tensor& indices, int64_t size, F&& fn) {
  const Tensor idx = indices.isContiguous() ? indices : clone(indices, MemoryFormat::Contiguous);
  const auto* p = idx.data<int64_t>();
  for (int64_t i = 0, n = idx.numel(); i < n; ++i) fn(i, p[i] < 0 ? p[i] + size : p[i]);
}

/// out[i] += g[i-th row] for each index i (index_put_ accumulate, a scatter-add).
void scatterAddRows(const Tensor& out, const Tensor& indices, const Tensor& g) {
  if (!out.hasData() || g.numel() == 0) return;
  if (ComputeBackend* be = out.compute()) {
    be->indexAddRows(
        out, indices.isContiguous() ? indices : clone(indices, MemoryFormat::Contiguous), g);
    return;
  }
  const int64_t rows = out.size(0);
  const Tensor gc = contiguous(g);
  const int64_t inner = rowElements(out);
  detail::dispatchFloating(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    void* po = out.dataPtr();
    const void* pg = gc.dataPtr();
    forEachIndex(indices, rows, [&](int64_t i, int64_t r) {
      for (int64_t k = 0; k < inner; ++k)
        T::store(po, r * inner + k, T::load(po, r * inner + k) + T::load(pg, i * inner + k));
    });
  });
}

/// out[i] = t[indices[i]] on the host: one memcpy per row when t's rows are dense.
void gatherRows(const Tensor& out, const Tensor& t, const Tensor& indices) {
  const int64_t rows = t.size(0);
  const bool rowsContiguous =
      out.isContiguous() && (t.dim() == 1 || select(t, 0, 0).isContiguous());
  const int64_t inner = rowElements(t);
  const int64_t es = t.elementSize();
  char* dst = static_cast<char*>(out.dataPtr());
  if (rowsContiguous) {
    const char* base = static_cast<const char*>(t.dataPtr());
    forEachIndex(indices, rows, [&](int64_t i, int64_t r) {
      std::memcpy(dst + i * inner * es, base + r * t.stride(0) * es,
                  static_cast<size_t>(inner * es));
    });
    return;
  }
  // out's first dims are the index's, in any layout: select position i of them row-major.
  const Shape idxSizes = indices.sizes();
  forEachIndex(indices, rows, [&](int64_t i, int64_t r) {
    Tensor o = out;
    int64_t block = indices.numel();
    for (int64_t size : idxSizes) {
      block /= size;
      o = select(o, 0, (i / block) % size);
    }
    copyInto(o, select(t, 0, r));
  });
}

class IndexBackward final : public Node {
 public:
  IndexBackward(Shape selfSizes, Tensor indices)
      : selfSizes_(std::move(selfSizes)), indices_(std::move(indices)) {}
  std::string name() const override { return "IndexBackward0"; }
  TensorList apply(TensorList&& g) override {
    OpScope op(g[0].device(), "index_put_");
    Tensor gi = zeros(selfSizes_, g[0].dtype(), g[0].storage().devicePtr(),
                      "grad of indexed input (index_put_)");
    const Tensor onDevice = indexOnDevice(indices_, gi);
    scatterAddRows(gi, gi.compute() ? onDevice : indices_, g[0]);
    return {gi};
  }
  void releaseSaved() override { indices_ = Tensor(); }
  /// PyTorch saves a list of index tensors ("indices"); with one indexed dim it is this one.
  std::vector<std::pair<std::string, Tensor>> savedTensors() const override {
    return {{"indices", indices_}};
  }

 private:
  Shape selfSizes_;
  Tensor indices_;  // host index: saved by autograd, costs no device memory
};

/// index(t, indices), its output laid out with `outStrides` when given (a host tensor only).
Tensor indexWithLayout(const Tensor& t, const Tensor& indices, const Shape* outStrides) {
  if (indices.dtype() != DType::Int64)
    throw std::invalid_argument("tensors used as indices must be long, byte or bool tensors");
  if (indices.dim() == 0) {
    if (!indices.hasData()) throw std::invalid_argument("a 0-dim meta index has no value");
    // indexes like a Python int (applySelect's bounds check and wording)
    const auto i = static_cast<int64_t>(hostReadable(indices, "index").item());
    if (t.dim() > 0 && (i < -t.size(0) || i >= t.size(0)))
      throw std::out_of_range("index " + std::to_string(i) +
                              " is out of bounds for dimension 0 with size " +
                              std::to_string(t.size(0)));
    return select(t, 0, i);
  }
  if (t.dim() == 0) throw std::out_of_range("too many indices for tensor of dimension 0");
  const int64_t rows = t.size(0);
  checkBounds(indices, rows);
  OpScope op(t.device(), "index");
  const Tensor onDevice = indexOnDevice(indices, t);
  Shape outSizes = indices.sizes();
  outSizes.insert(outSizes.end(), t.sizes().begin() + 1, t.sizes().end());
  Tensor out = empty(outSizes, t.dtype(), t.storage().devicePtr(), "indexed copy");
  if (outStrides && !t.compute()) out = makeView(out, outSizes, *outStrides, 0);
  if (out.hasData() && indices.hasData() && out.numel() > 0) {
    NoGradGuard noGrad;  // the gather itself builds no graph
    if (ComputeBackend* be = out.compute())
      be->indexRows(out, t,
                    onDevice.isContiguous() ? onDevice : clone(onDevice, MemoryFormat::Contiguous));
    else
      gatherRows(out, t, indices);
  }
  if (anyRequiresGrad({&t})) {
    auto node = std::make_shared<IndexBackward>(t.sizes(), indices);
    node->nextEdges = {gradientEdge(t)};
    setHistory(out, node);
  }
  return out;
}

/// t indexed at `dim` as a gather along dim 0 between two permutes (so the graph is
/// PermuteBackward0, IndexBackward0, PermuteBackward0), the result laid out with `strides`
/// when given.
Tensor permuteIndexed(const Tensor& t, int64_t dim, const Tensor& indices, const Shape* strides) {
  if (dim == 0) return indexWithLayout(t, indices, strides);
  std::vector<int64_t> toFront{dim};
  for (int64_t i = 0; i < t.dim(); ++i)
    if (i != dim) toFront.push_back(i);
  const int64_t k = indices.dim();
  std::vector<int64_t> order;  // gathered [index dims, before, after] -> [before, index, after]
  for (int64_t i = 0; i < dim; ++i) order.push_back(k + i);
  for (int64_t i = 0; i < k; ++i) order.push_back(i);
  for (int64_t i = k + dim; i < t.dim() - 1 + k; ++i) order.push_back(i);
  std::optional<Shape> gatheredStrides;
  if (strides) {
    gatheredStrides.emplace(strides->size());
    for (size_t f = 0; f < order.size(); ++f) (*gatheredStrides)[order[f]] = (*strides)[f];
  }
  const Tensor gathered =
      indexWithLayout(permute(t, toFront), indices, gatheredStrides ? &*gatheredStrides : nullptr);
  return permute(gathered, order);
}

}  // namespace

Tensor index(const Tensor& t, const Tensor& indices) {
  return indexWithLayout(t, indices, nullptr);
}

Tensor indexDim(const Tensor& t, int64_t dim, const Tensor& indices) {
  if (t.dim() == 0) throw std::out_of_range("too many indices for tensor of dimension 0");
  dim = wrapDim(dim, t.dim());
  if (dim == 0 || indices.dim() == 0 || indices.dtype() != DType::Int64)
    return permuteIndexed(t, dim, indices, nullptr);
  // PyTorch's output: t's dims before `dim`, the index's dims, t's dims after, laid out as
  // TensorIterator orders the restrided operands: t with stride 0 on the index dims, the index
  // with stride 0 on the others (TensorAdvancedIndexing.cpp: make_info, restride_src).
  const int64_t k = indices.dim();
  Shape sizes(t.sizes().begin(), t.sizes().begin() + dim);
  sizes.insert(sizes.end(), indices.sizes().begin(), indices.sizes().end());
  sizes.insert(sizes.end(), t.sizes().begin() + dim + 1, t.sizes().end());
  Shape srcStrides(sizes.size(), 0), idxStrides(sizes.size(), 0);
  for (int64_t i = 0; i < t.dim(); ++i)
    if (i != dim) srcStrides[i < dim ? i : i + k - 1] = t.stride(i);
  for (int64_t i = 0; i < k; ++i) idxStrides[dim + i] = indices.stride(i);
  const Shape strides = denseStridesLike(sizes, {srcStrides, idxStrides});
  return permuteIndexed(t, dim, indices, &strides);
}

}  // namespace matmulviz
