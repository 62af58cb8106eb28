// Advanced indexing along dim 0 (t[q]) and its backward (index_put_ with accumulate=True);
// nonzero, and boolean-mask indexing (t[mask]) through it as at::index expands a mask.
#include "core/autograd/grad_mode.h"
#include "core/autograd/node.h"
#include "core/memory/sort_temporaries.h"
#include "core/ops/ops.h"
#include "core/ops/shape_rules.h"
#include "core/ops/strided_loop.h"

#include <cstring>
#include <optional>
#include <stdexcept>
#include <vector>

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
  return toDevice(indices, self.storage().devicePtr(), "index copied to the device")
      .setCategory(MemoryCategory::Inputs);
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
    // index_put_ with accumulate sorts the linear indices on CUDA: its buffers and CUB's storage.
    if (DeviceContext* device = gi.device(); device && gi.numel() > 0 && indices_.numel() > 0)
      replayTemporaries(
          device->allocator(),
          indexPutSortTemporaries(indices_.numel(), selfSizes_[0] - 1,
                                  indices_.deviceKind() != DeviceKind::Host,
                                  device->allocator().options().pytorch.architecture()));
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

/// The flat (row-major) positions of t's non-zero elements (NaN counts as non-zero), read on the
/// host.
std::vector<int64_t> nonzeroPositions(const Tensor& t) {
  const Tensor host = hostReadable(t, "nonzero input on the host");
  std::vector<int64_t> positions;
  const void* p = host.dataPtr();
  int64_t k = 0;
  detail::forEachRun(host.sizes(), host.strides(), host.strides(),
                     [&](int64_t o, int64_t, int64_t n, int64_t s, int64_t) {
                       for (int64_t i = 0; i < n; ++i, ++k)
                         if (loadAsDouble(p, host.dtype(), o + i * s) != 0) positions.push_back(k);
                     });
  return positions;
}

/// A bool mask as at::index takes it (aten/src/ATen/native/IndexingUtils.h expandTensors, then
/// make_info): nonzero(mask) gives one int64 index per mask dim, and a host mask's indices are
/// copied to self's device. Every tensor here lives only as long as the op that made it.
struct MaskIndex {
  Tensor nonzero;              ///< [n, k] int64 on the mask's device
  std::vector<Tensor> copies;  ///< column j of `nonzero` on self's device (a host mask only)
};

MaskIndex expandMask(const Tensor& mask, const Tensor& self) {
  MaskIndex m{nonzero(mask), {}};
  if (mask.deviceKind() == DeviceKind::Host && self.deviceKind() != DeviceKind::Host)
    for (int64_t j = 0; j < mask.dim(); ++j)
      m.copies.push_back(toDevice(select(m.nonzero, 1, j), self.storage().devicePtr(),
                                  "mask index copied to the device"));
  return m;
}

/// The mask's single index (k == 1) on self's device, contiguous, for a ComputeBackend.
Tensor rowIndexOnDevice(const MaskIndex& m) {
  const Tensor idx = m.copies.empty() ? select(m.nonzero, 1, 0) : m.copies[0];
  return idx.isContiguous() ? idx : clone(idx);
}

/// Storage offsets (in elements) of the sub-tensors t[i_0, ..., i_{k-1}] the mask selects, in
/// order (t's first k dims are the mask's).
std::vector<int64_t> maskedOffsets(const MaskIndex& m, const Tensor& t) {
  const Tensor nz = contiguous(hostReadable(m.nonzero, "nonzero on the host"));
  const int64_t n = nz.size(0), k = nz.size(1);
  const auto* p = nz.data<int64_t>();
  std::vector<int64_t> offsets(static_cast<size_t>(n), t.storageOffset());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < k; ++j) offsets[i] += p[i * k + j] * t.stride(j);
  return offsets;
}

/// t's sizes and strides from dim k on: the shape of one selected sub-tensor.
std::pair<Shape, Shape> trailing(const Tensor& t, int64_t k) {
  return {Shape(t.sizes().begin() + k, t.sizes().end()),
          Shape(t.strides().begin() + k, t.strides().end())};
}

/// The mask's dtype, dims, shape and device against t's (the checks that need no values).
void checkMaskShape(const Tensor& t, const Tensor& mask) {
  if (mask.dtype() != DType::Bool)
    throw std::invalid_argument("index: a mask must be a bool tensor, got " +
                                std::string(dtypeName(mask.dtype())));
  if (mask.dim() == 0)
    throw std::invalid_argument("index: a 0-dim mask is not supported (use a 1-dim one)");
  if (mask.dim() > t.dim())
    throw std::out_of_range("too many indices for tensor of dimension " + std::to_string(t.dim()));
  for (int64_t j = 0; j < mask.dim(); ++j)
    if (mask.size(j) != t.size(j))
      throw std::out_of_range("The shape of the mask " + mask.shapeString() + " at index " +
                              std::to_string(j) +
                              " does not match the shape of the indexed tensor " + t.shapeString() +
                              " at index " + std::to_string(j));
  if (mask.deviceKind() != DeviceKind::Host && mask.device() != t.device())
    throw std::out_of_range(
        "indices should be either on cpu or on the same device as the indexed tensor");
}

void checkMask(const Tensor& t, const Tensor& mask) {
  checkMaskShape(t, mask);
  if (!mask.hasData() || !t.hasData())
    throw std::invalid_argument(
        "index: boolean-mask indexing needs the mask's values (the result's size is the number "
        "of true elements), and a tensor without data (the meta device) has none");
  if (t.compute() && mask.dim() > 1)
    throw std::invalid_argument(
        "index: a mask of more than one dim is not supported on a device "
        "with its own memory yet (" +
        t.compute()->name() + "); index with a 1-dim mask");
}

/// IndexBackward0 of t[mask]: PyTorch saves the mask itself (the index list passed to
/// at::index) and expands it again in index_put_.
class MaskIndexBackward final : public Node {
 public:
  MaskIndexBackward(Shape selfSizes, Tensor mask)
      : selfSizes_(std::move(selfSizes)), mask_(std::move(mask)) {}
  std::string name() const override { return "IndexBackward0"; }
  TensorList apply(TensorList&& g) override {
    OpScope op(g[0].device(), "index_put_");
    Tensor gi = zeros(selfSizes_, g[0].dtype(), g[0].storage().devicePtr(),
                      "grad of indexed input (index_put_)");
    if (!gi.hasData() || g[0].numel() == 0) return {gi};
    const MaskIndex m = expandMask(mask_, gi);
    NoGradGuard noGrad;
    if (ComputeBackend* be = gi.compute()) {
      be->indexAddRows(gi, rowIndexOnDevice(m), contiguous(g[0]));
      return {gi};
    }
    const auto [sizes, strides] = trailing(gi, mask_.dim());
    const std::vector<int64_t> offsets = maskedOffsets(m, gi);
    for (size_t i = 0; i < offsets.size(); ++i)
      addInPlace(makeView(gi, sizes, strides, offsets[i]),
                 select(g[0], 0, static_cast<int64_t>(i)));
    return {gi};
  }
  void releaseSaved() override { mask_ = Tensor(); }
  std::vector<std::pair<std::string, Tensor>> savedTensors() const override {
    return {{"indices", mask_}};
  }

 private:
  Shape selfSizes_;
  Tensor mask_;
};

}  // namespace

Tensor nonzero(const Tensor& t) {
  if (!t.hasData())
    throw std::invalid_argument(
        "nonzero: the result's size depends on the tensor's values, and a tensor without data "
        "(the meta device) has none");
  const std::vector<int64_t> positions = nonzeroPositions(t);
  const auto n = static_cast<int64_t>(positions.size());
  const int64_t k = t.dim();
  OpScope op(t.device(), "nonzero");
  Tensor out = empty({n, k}, DType::Int64, t.storage().devicePtr(), "nonzero output");
  // Computed on the host; a device with its own memory gets the values in one transfer.
  const Tensor values = out.compute() ? empty({n, k}, DType::Int64, nullptr, "nonzero") : out;
  auto* p = values.data<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = positions[i];
    for (int64_t j = k - 1; j >= 0; --j) {
      p[i * k + j] = rest % t.size(j);
      rest /= t.size(j);
    }
  }
  if (values.impl() != out.impl()) copyInto(out, values);
  return out;
}

Tensor indexWithMask(const Tensor& t, const Tensor& mask) {
  checkMask(t, mask);
  OpScope op(t.device(), "index");
  Tensor out;
  {
    const MaskIndex m = expandMask(mask, t);  // freed at the end of this block, as in PyTorch
    const int64_t n = m.nonzero.size(0);
    const auto [sizes, strides] = trailing(t, mask.dim());
    Shape outSizes{n};
    outSizes.insert(outSizes.end(), sizes.begin(), sizes.end());
    out = empty(outSizes, t.dtype(), t.storage().devicePtr(), "indexed copy");
    if (out.numel() > 0) {
      NoGradGuard noGrad;  // the gather itself builds no graph
      if (ComputeBackend* be = out.compute()) {
        be->indexRows(out, t, rowIndexOnDevice(m));
      } else {
        const int64_t inner = numelOf(sizes);
        const std::vector<int64_t> offsets = maskedOffsets(m, t);
        const Tensor rowOf = makeView(t, sizes, strides, 0);
        const bool dense = rowOf.isContiguous();
        const int64_t es = t.elementSize();
        auto* dst = static_cast<char*>(out.dataPtr());
        const auto* base = static_cast<const char*>(t.storage().data());
        for (int64_t i = 0; i < n; ++i) {
          if (dense)
            std::memcpy(dst + i * inner * es, base + offsets[i] * es,
                        static_cast<size_t>(inner * es));
          else
            copyInto(select(out, 0, i), makeView(t, sizes, strides, offsets[i]));
        }
      }
    }
  }
  if (anyRequiresGrad({&t})) {
    auto node = std::make_shared<MaskIndexBackward>(t.sizes(), mask);
    node->nextEdges = {gradientEdge(t)};
    setHistory(out, node);
  }
  return out;
}

void indexPutWithMask(const Tensor& t, const Tensor& mask, const Tensor& values) {
  checkMaskShape(t, mask);
  if (t.compute())
    throw std::invalid_argument(
        "index_put_: assignment through a mask is not supported on a "
        "device with its own memory yet (" +
        t.compute()->name() + ")");
  const auto [sizes, strides] = trailing(t, mask.dim());
  NoGradGuard noGrad;
  if (values.numel() == 1 && values.deviceKind() == DeviceKind::Host &&
      mask.device() == t.device()) {
    // at::_index_put_impl_ hands a mask on self's device and a one-element CPU value to
    // masked_fill_ (canDispatchToMaskedFill): nothing is allocated.
    if (!t.hasData()) return;
    if (!mask.hasData())
      throw std::invalid_argument("index_put_: the mask has no values (the meta device)");
    OpScope op(t.device(), "masked_fill_");
    const Tensor host = hostReadable(mask, "mask on the host");
    const Tensor value = expand(makeView(values, {}, {}, values.storageOffset()), sizes);
    const std::vector<int64_t> positions = nonzeroPositions(host);
    for (int64_t p : positions) {
      int64_t offset = t.storageOffset(), rest = p;
      for (int64_t j = mask.dim() - 1; j >= 0; --j) {
        offset += rest % mask.size(j) * t.stride(j);
        rest /= mask.size(j);
      }
      copyInto(makeView(t, sizes, strides, offset), value);
    }
    return;
  }
  if (values.dtype() != t.dtype())
    throw std::invalid_argument("Index put requires the source and destination dtypes match, got " +
                                std::string(scalarTypeName(t.dtype())) +
                                " for the destination and " +
                                std::string(scalarTypeName(values.dtype())) + " for the source.");
  checkMask(t, mask);
  OpScope op(t.device(), "index_put_");
  const MaskIndex m = expandMask(mask, t);
  Shape target{m.nonzero.size(0)};
  target.insert(target.end(), sizes.begin(), sizes.end());
  bool broadcasts = values.dim() <= static_cast<int64_t>(target.size());
  for (int64_t i = 1; broadcasts && i <= values.dim(); ++i) {
    const int64_t v = values.size(-i), want = target[target.size() - static_cast<size_t>(i)];
    broadcasts = v == want || v == 1;
  }
  if (!broadcasts)
    throw std::invalid_argument("shape mismatch: value tensor of shape " + values.shapeString() +
                                " cannot be broadcast to indexing result of shape " +
                                shapeToString(target));
  if (!values.hasData()) return;
  const Tensor expanded = expand(values, target);
  const std::vector<int64_t> offsets = maskedOffsets(m, t);
  for (size_t i = 0; i < offsets.size(); ++i)
    copyInto(makeView(t, sizes, strides, offsets[i]), select(expanded, 0, static_cast<int64_t>(i)));
}

namespace {

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
