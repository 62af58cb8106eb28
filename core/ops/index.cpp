// Advanced indexing along dim 0 (t[q]) and its backward (index_put_ with accumulate=True).
#include "core/autograd/grad_mode.h"
#include "core/autograd/node.h"
#include "core/ops/ops.h"
#include "core/ops/strided_loop.h"

#include <cstring>
#include <stdexcept>

namespace matmulviz {

namespace {

/// Checks every index against [-size, size) before anything is allocated.
void checkBounds(const Tensor& indices, int64_t size) {
  if (!indices.hasData()) return;
  const Tensor host = hostReadable(indices, "index on the host");
  const Tensor idx = host.isContiguous() ? host : clone(host);
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
  return toDevice(indices, self.storage().devicePtr(), "index copied to the device")
      .setCategory(MemoryCategory::Inputs);
}

int64_t rowElements(const Tensor& t) {
  return t.dim() == 0 ? 1 : t.numel() / std::max<int64_t>(t.size(0), 1);
}

/// Calls fn(i, row) for each position i of the flattened index with its (wrapped) row.
template <typename F>
void forEachIndex(const Tensor& indices, int64_t size, F&& fn) {
  const Tensor idx = indices.isContiguous() ? indices : clone(indices);
  const auto* p = idx.data<int64_t>();
  for (int64_t i = 0, n = idx.numel(); i < n; ++i) fn(i, p[i] < 0 ? p[i] + size : p[i]);
}

/// out[i] += g[i-th row] for each index i (index_put_ accumulate, a scatter-add).
void scatterAddRows(const Tensor& out, const Tensor& indices, const Tensor& g) {
  if (!out.hasData() || g.numel() == 0) return;
  if (ComputeBackend* be = out.compute()) {
    be->indexAddRows(out, indices.isContiguous() ? indices : clone(indices), g);
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
  const bool rowsContiguous = t.dim() == 1 || select(t, 0, 0).isContiguous();
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
  Shape flat{indices.numel()};
  flat.insert(flat.end(), t.sizes().begin() + 1, t.sizes().end());
  const Tensor outRows = view(out, flat);
  forEachIndex(indices, rows,
               [&](int64_t i, int64_t r) { copyInto(select(outRows, 0, i), select(t, 0, r)); });
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

}  // namespace

Tensor index(const Tensor& t, const Tensor& indices) {
  if (indices.dtype() != DType::Int64)
    throw std::invalid_argument("tensors used as indices must be long, int, byte or bool tensors");
  if (indices.dim() == 0) {
    if (!indices.hasData()) throw std::invalid_argument("a 0-dim meta index has no value");
    return select(
        t, 0,
        static_cast<int64_t>(hostReadable(indices, "index").item()));  // indexes like a Python int
  }
  if (t.dim() == 0) throw std::out_of_range("too many indices for tensor of dimension 0");
  const int64_t rows = t.size(0);
  checkBounds(indices, rows);
  OpScope op(t.device(), "index");
  const Tensor onDevice = indexOnDevice(indices, t);
  Shape outSizes = indices.sizes();
  outSizes.insert(outSizes.end(), t.sizes().begin() + 1, t.sizes().end());
  Tensor out = empty(outSizes, t.dtype(), t.storage().devicePtr(), "indexed copy");
  if (out.hasData() && indices.hasData() && out.numel() > 0) {
    NoGradGuard noGrad;  // the gather itself builds no graph
    if (ComputeBackend* be = out.compute())
      be->indexRows(out, t, onDevice.isContiguous() ? onDevice : clone(onDevice));
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

}  // namespace matmulviz
