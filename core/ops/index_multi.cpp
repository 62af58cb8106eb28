// Advanced indexing with several integer tensors (at::index with an index list), index_put_
// through them (accumulate=False), and in-place assignment into a tensor that requires grad
// (CopySlices), as aten/src/ATen/native/TensorAdvancedIndexing.cpp and
// torch/csrc/autograd/functions/tensor.cpp do them.
#include "core/autograd/grad_mode.h"
#include "core/autograd/node.h"
#include "core/ops/ops.h"
#include "core/ops/pointwise.h"
#include "core/ops/shape_rules.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace matmulviz {

namespace {

/// What at::index does with an index list before the kernel runs: the index tensors broadcast
/// together, the indexed dims moved to the front when they are not adjacent (transposeToFront),
/// and for each position of the broadcast shape the storage offset (in elements, from the
/// source's) of the sub-tensor it selects.
struct IndexPlan {
  Tensor src;         ///< t, its indexed dims permuted to the front when they are apart
  int64_t first = 0;  ///< the first indexed dim of src (and of the result's index dims)
  int64_t k = 0;      ///< the number of indexed dims (consecutive in src from `first`)
  Shape broadcast;    ///< the index tensors' broadcast shape
  Shape resultSizes;  ///< src's dims before `first`, broadcast, src's dims after the indexed
  std::vector<const Tensor*> used;  ///< the index tensors, in src's dim order
  std::vector<int64_t> offsets;     ///< per broadcast position (row-major); empty on meta
};

std::string shapesList(const std::vector<const Tensor*>& ts) {
  std::string s;
  for (const Tensor* t : ts) s += (s.empty() ? "" : ", ") + t->shapeString();
  return s;
}

IndexPlan planIndex(const Tensor& t, const std::vector<std::optional<Tensor>>& indices) {
  if (static_cast<int64_t>(indices.size()) > t.dim())
    throw std::out_of_range("too many indices for tensor of dimension " + std::to_string(t.dim()));
  std::vector<int64_t> dims;
  std::vector<const Tensor*> used;
  for (size_t i = 0; i < indices.size(); ++i) {
    if (!indices[i]) continue;
    if (indices[i]->dtype() != DType::Int64)
      throw std::out_of_range("tensors used as indices must be long, byte or bool tensors");
    if (indices[i]->deviceKind() != DeviceKind::Host && indices[i]->device() != t.device())
      throw std::out_of_range(
          "indices should be either on cpu or on the same device as the indexed tensor");
    dims.push_back(static_cast<int64_t>(i));
    used.push_back(&*indices[i]);
  }
  if (used.empty()) throw std::invalid_argument("index: no index tensor given");
  IndexPlan p;
  p.used = used;
  p.k = static_cast<int64_t>(dims.size());
  // Broadcast the index shapes (at::expand_outplace), PyTorch's IndexError when they do not.
  for (const Tensor* idx : used) {
    Shape a = p.broadcast, b = idx->sizes();
    const size_t n = std::max(a.size(), b.size());
    Shape out(n);
    for (size_t i = 0; i < n; ++i) {
      const int64_t sa = i < n - a.size() ? 1 : a[i - (n - a.size())];
      const int64_t sb = i < n - b.size() ? 1 : b[i - (n - b.size())];
      if (sa != sb && sa != 1 && sb != 1)
        throw std::out_of_range(
            "shape mismatch: indexing tensors could not be broadcast together with shapes " +
            shapesList(used));
      out[i] = sa == 1 ? sb : sa;
    }
    p.broadcast = out;
  }
  const bool adjacent = dims.back() - dims.front() + 1 == p.k;
  if (adjacent) {
    p.src = t;
    p.first = dims.front();
  } else {
    std::vector<int64_t> order = dims;
    for (int64_t i = 0; i < t.dim(); ++i)
      if (std::find(dims.begin(), dims.end(), i) == dims.end()) order.push_back(i);
    p.src = permute(t, order);
    p.first = 0;
  }
  p.resultSizes.assign(p.src.sizes().begin(), p.src.sizes().begin() + p.first);
  p.resultSizes.insert(p.resultSizes.end(), p.broadcast.begin(), p.broadcast.end());
  p.resultSizes.insert(p.resultSizes.end(), p.src.sizes().begin() + p.first + p.k,
                       p.src.sizes().end());
  if (!t.hasData()) return p;
  for (const Tensor* idx : used)
    if (!idx->hasData()) throw std::invalid_argument("index: a meta index has no values");
  const int64_t n = numelOf(p.broadcast);
  p.offsets.assign(static_cast<size_t>(n), 0);
  for (int64_t j = 0; j < p.k; ++j) {
    const int64_t size = p.src.size(p.first + j), stride = p.src.stride(p.first + j);
    // read through the broadcast view: nothing allocated on the index's device
    const std::vector<double> v =
        expand(hostReadable(*used[j], "index on the host"), p.broadcast).toDoubles();
    for (int64_t i = 0; i < n; ++i) {
      const auto x = static_cast<int64_t>(v[static_cast<size_t>(i)]);
      if (x < -size || x >= size)
        throw std::out_of_range("index " + std::to_string(x) + " is out of bounds for dimension " +
                                std::to_string(j) + " with size " + std::to_string(size));
      p.offsets[static_cast<size_t>(i)] += (x < 0 ? x + size : x) * stride;
    }
  }
  return p;
}

/// r without its dims [pos, pos + count): the sub-tensor at storage offset `offset`.
Tensor without(const Tensor& r, int64_t pos, int64_t count, int64_t offset) {
  Shape sizes(r.sizes().begin(), r.sizes().begin() + pos),
      strides(r.strides().begin(), r.strides().begin() + pos);
  sizes.insert(sizes.end(), r.sizes().begin() + pos + count, r.sizes().end());
  strides.insert(strides.end(), r.strides().begin() + pos + count, r.strides().end());
  return makeView(r, sizes, strides, offset);
}

/// The storage offset of r's element at row-major position i of its dims [pos, pos + count).
int64_t offsetAt(const Tensor& r, int64_t pos, int64_t count, int64_t i) {
  int64_t offset = r.storageOffset();
  for (int64_t d = pos + count - 1; d >= pos; --d) {
    offset += (i % r.size(d)) * r.stride(d);
    i /= r.size(d);
  }
  return offset;
}

/// The host indices copied to t's device for the kernel (PyTorch's AdvancedIndex constructor:
/// `indices[i].to(src.device())`); they are freed when the returned vector goes.
std::vector<Tensor> indicesOnDevice(const IndexPlan& p, const Tensor& t) {
  std::vector<Tensor> copies;
  if (t.deviceKind() == DeviceKind::Host) return copies;
  for (const Tensor* idx : p.used)
    if (idx->deviceKind() == DeviceKind::Host)
      copies.push_back(toDevice(*idx, t.storage().devicePtr(), "index copied to the device")
                           .setCategory(MemoryCategory::Inputs));
  return copies;
}

void refuseCompute(const Tensor& t, const std::string& what) {
  if (t.compute())
    throw NotSupportedError(what +
                            ": more than one index tensor is not supported on a device with "
                            "its own memory yet (" +
                            t.compute()->name() + ")");
}

/// Drops the index tensors a node saved (PyTorch's `indices` list) after backward.
void releaseIndices(std::vector<std::optional<Tensor>>& indices) {
  for (auto& idx : indices)
    if (idx) idx = Tensor();
}

/// The saved index tensors under PyTorch's name, for grad_fn._saved_indices.
std::vector<std::pair<std::string, Tensor>> namedIndices(
    const std::vector<std::optional<Tensor>>& indices) {
  std::vector<std::pair<std::string, Tensor>> saved;
  for (const auto& idx : indices)
    if (idx) saved.emplace_back("indices", *idx);
  return saved;
}

/// IndexBackward0 of t[i, j, ...]: saves the index list; the gradient is index_put_ with
/// accumulate=True into zeros of t's shape.
class MultiIndexBackward final : public Node {
 public:
  MultiIndexBackward(Shape selfSizes, std::vector<std::optional<Tensor>> indices)
      : selfSizes_(std::move(selfSizes)), indices_(std::move(indices)) {}
  std::string name() const override { return "IndexBackward0"; }
  TensorList apply(TensorList&& g) override {
    OpScope op(g[0].device(), "index_put_");
    Tensor gi = zeros(selfSizes_, g[0].dtype(), g[0].storage().devicePtr(),
                      "grad of indexed input (index_put_)");
    if (!gi.hasData()) return {gi};
    const IndexPlan p = planIndex(gi, indices_);
    const std::vector<Tensor> copies = indicesOnDevice(p, gi);
    NoGradGuard noGrad;
    const int64_t nb = static_cast<int64_t>(p.broadcast.size());
    for (size_t i = 0; i < p.offsets.size(); ++i)
      addInPlace(without(p.src, p.first, p.k, p.src.storageOffset() + p.offsets[i]),
                 without(g[0], p.first, nb, offsetAt(g[0], p.first, nb, static_cast<int64_t>(i))));
    return {gi};
  }
  void releaseSaved() override { releaseIndices(indices_); }
  std::vector<std::pair<std::string, Tensor>> savedTensors() const override {
    return namedIndices(indices_);
  }

 private:
  Shape selfSizes_;
  std::vector<std::optional<Tensor>> indices_;
};

/// torch::autograd::CopySlices: the base's gradient with the assigned part's gradient routed
/// through the copy's backward (CopyBackwards: zeros for the overwritten part, the gradient for
/// the source, summed to its shape).
class CopySlicesNode final : public Node {
 public:
  CopySlicesNode(Tensor base, Tensor view, Shape srcSizes, DType srcDType)
      : baseSizes_(base.sizes()),
        baseStrides_(base.strides()),
        viewSizes_(view.sizes()),
        viewStrides_(view.strides()),
        viewOffset_(view.storageOffset() - base.storageOffset()),
        srcSizes_(std::move(srcSizes)),
        srcDType_(srcDType) {}
  std::string name() const override { return "CopySlices"; }
  TensorList apply(TensorList&& g) override {
    OpScope op(g[0].device(), "CopySlices");
    NoGradGuard noGrad;
    // result = at::empty_strided(base.sizes(), base.strides()); result.copy_(grad)
    int64_t span = 1;
    for (size_t d = 0; d < baseSizes_.size(); ++d) {
      if (baseSizes_[d] == 0) span = 0;
      if (span) span += (baseSizes_[d] - 1) * baseStrides_[d];
    }
    const Tensor storage =
        empty({span}, g[0].dtype(), g[0].storage().devicePtr(), "grad of the base (CopySlices)");
    const Tensor result = makeView(storage, baseSizes_, baseStrides_, 0);
    if (result.hasData()) copyInto(result, g[0]);
    const Tensor gradSlice = makeView(storage, viewSizes_, viewStrides_, viewOffset_);
    TensorList out{result, Tensor()};
    {
      const Tensor sliceGrad = clone(gradSlice);  // res = fn({grad_slice.clone()})
      if (needsInputGrad(1)) {
        Tensor gs = sumTo(sliceGrad, srcSizes_);
        if (gs.dtype() != srcDType_) gs = toDType(gs, srcDType_);
        out[1] = gs;
      }
      const Tensor zero =
          zeros(viewSizes_, g[0].dtype(), g[0].storage().devicePtr(), "zeros_like (CopyBackwards)");
      if (gradSlice.hasData()) copyInto(gradSlice, zero);  // grad_slice.copy_(res[0])
    }
    return out;
  }

 private:
  Shape baseSizes_, baseStrides_, viewSizes_, viewStrides_;
  int64_t viewOffset_;
  Shape srcSizes_;
  DType srcDType_;
};

/// IndexPutBackward0 of t[indices] = values (derivatives.yaml's index_put_: self's gradient is
/// grad.index_put(indices, zeros_like(values)), values' grad.index(indices), summed to values'
/// shape). Saves the index list.
class IndexPutBackward final : public Node {
 public:
  IndexPutBackward(std::vector<std::optional<Tensor>> indices, Shape valuesSizes)
      : indices_(std::move(indices)), valuesSizes_(std::move(valuesSizes)) {}
  std::string name() const override { return "IndexPutBackward0"; }
  TensorList apply(TensorList&& g) override {
    OpScope op(g[0].device(), "IndexPutBackward0");
    NoGradGuard noGrad;
    TensorList out(2);
    if (needsInputGrad(0)) {
      out[0] = clone(g[0]);
      const Tensor zero = zeros(valuesSizes_, g[0].dtype(), g[0].storage().devicePtr(),
                                "zeros_like (IndexPutBackward0)");
      indexPut(out[0], indices_, zero);
    }
    if (needsInputGrad(1)) {
      Tensor gv = indexTensors(g[0], indices_);
      out[1] = gv.sizes() == valuesSizes_ ? gv : sumTo(gv, valuesSizes_);
    }
    return out;
  }
  void releaseSaved() override { releaseIndices(indices_); }
  std::vector<std::pair<std::string, Tensor>> savedTensors() const override {
    return namedIndices(indices_);
  }

 private:
  std::vector<std::optional<Tensor>> indices_;
  Shape valuesSizes_;
};

/// The view nodes: assigning into a tensor whose grad_fn is one of these would need
/// CopySlices on its base, which the engine does not track.
bool isViewNode(const std::string& name) {
  static const char* const kViews[] = {
      "SelectBackward0",  "SliceBackward0",          "ViewBackward0",      "TransposeBackward0",
      "PermuteBackward0", "ExpandBackward0",         "UnsqueezeBackward0", "SqueezeBackward0",
      "SqueezeBackward1", "SqueezeBackward3",        "TBackward0",         "AsStridedBackward0",
      "SplitBackward0",   "SplitWithSizesBackward0", "DiagonalBackward0",  "ReshapeAliasBackward0",
      "AliasBackward0",   "UnbindBackward0",         "CopySlices"};
  for (const char* v : kViews)
    if (name == v) return name != "CopySlices";
  return false;
}

/// In place into `t` with autograd: PyTorch's leaf check; a view of a tensor that requires grad
/// would need CopySlices on its base, which the engine does not track.
void checkInPlaceTarget(const Tensor& t) {
  if (t.requiresGrad() && t.isLeaf())
    throw std::logic_error(
        "a leaf Variable that requires grad is being used in an in-place operation.");
  if (t.gradFn() && isViewNode(t.gradFn()->name()))
    throw NotSupportedError(
        "in-place assignment into a view of a tensor that requires grad (CopySlices on the "
        "view's base)");
}

}  // namespace

Tensor indexTensors(const Tensor& t, const std::vector<std::optional<Tensor>>& indices) {
  const IndexPlan p = planIndex(t, indices);
  refuseCompute(t, "index");
  OpScope op(t.device(), "index");
  Tensor out;
  {
    const std::vector<Tensor> copies = indicesOnDevice(p, t);  // freed at the end of the op
    // TensorIterator's layout: src restrided with stride 0 on the index dims, each index with
    // stride 0 on the others (TensorAdvancedIndexing.cpp: make_info, restride_src).
    const int64_t nb = static_cast<int64_t>(p.broadcast.size());
    const size_t n = p.resultSizes.size();
    std::vector<Shape> operands;
    Shape srcStrides(n, 0);
    for (int64_t i = 0; i < p.src.dim(); ++i) {
      if (i < p.first) srcStrides[i] = p.src.stride(i);
      if (i >= p.first + p.k) srcStrides[i - p.k + nb] = p.src.stride(i);
    }
    operands.push_back(srcStrides);
    for (const Tensor* idx : p.used) {
      const Tensor e = expand(*idx, p.broadcast);
      Shape st(n, 0);
      for (int64_t i = 0; i < nb; ++i) st[p.first + i] = e.stride(i);
      operands.push_back(st);
    }
    const Shape strides = denseStridesLike(p.resultSizes, operands);
    const Tensor storage =
        empty({numelOf(p.resultSizes)}, t.dtype(), t.storage().devicePtr(), "indexed copy");
    out = makeView(storage, p.resultSizes, strides, 0);
    if (out.hasData()) {
      NoGradGuard noGrad;
      for (size_t i = 0; i < p.offsets.size(); ++i)
        copyInto(without(out, p.first, nb, offsetAt(out, p.first, nb, static_cast<int64_t>(i))),
                 without(p.src, p.first, p.k, p.src.storageOffset() + p.offsets[i]));
    }
  }
  if (anyRequiresGrad({&t})) {
    auto node = std::make_shared<MultiIndexBackward>(t.sizes(), indices);
    node->nextEdges = {gradientEdge(t)};
    setHistory(out, node);
  }
  return out;
}

void indexPut(const Tensor& t, const std::vector<std::optional<Tensor>>& indices,
              const Tensor& values) {
  if (values.dtype() != t.dtype())
    throw std::invalid_argument("Index put requires the source and destination dtypes match, got " +
                                std::string(scalarTypeName(t.dtype())) +
                                " for the destination and " +
                                std::string(scalarTypeName(values.dtype())) + " for the source.");
  const IndexPlan p = planIndex(t, indices);
  bool broadcasts = values.dim() <= static_cast<int64_t>(p.resultSizes.size());
  for (int64_t i = 1; broadcasts && i <= values.dim(); ++i) {
    const int64_t v = values.size(-i),
                  want = p.resultSizes[p.resultSizes.size() - static_cast<size_t>(i)];
    broadcasts = v == want || v == 1;
  }
  if (!broadcasts)
    throw std::invalid_argument("shape mismatch: value tensor of shape " + values.shapeString() +
                                " cannot be broadcast to indexing result of shape " +
                                shapeToString(p.resultSizes));
  refuseCompute(t, "index_put_");
  const bool grad = anyRequiresGrad({&t, &values});
  if (grad) checkInPlaceTarget(t);
  {
    OpScope op(t.device(), "index_put_");
    const std::vector<Tensor> copies = indicesOnDevice(p, t);  // freed at the end of the op
    if (t.hasData() && values.hasData()) {
      NoGradGuard noGrad;
      const Tensor v = expand(values, p.resultSizes);
      const int64_t nb = static_cast<int64_t>(p.broadcast.size());
      for (size_t i = 0; i < p.offsets.size(); ++i)
        copyInto(without(p.src, p.first, p.k, p.src.storageOffset() + p.offsets[i]),
                 without(v, p.first, nb, offsetAt(v, p.first, nb, static_cast<int64_t>(i))));
    }
  }
  if (!grad) return;
  auto node = std::make_shared<IndexPutBackward>(indices, values.sizes());
  node->nextEdges = {gradientEdge(t), gradientEdge(values)};
  setHistory(t, node);
}

void copyIntoRecorded(const Tensor& base, const Tensor& view, const Tensor& src) {
  const bool grad = anyRequiresGrad({&base, &src});
  if (grad) checkInPlaceTarget(base);
  // __setitem__'s copy_to: a src of another shape is expanded first (expand_inplace), so its
  // gradient goes through ExpandBackward0.
  const Tensor b = src.sizes() == view.sizes() ? src : expand(src, view.sizes());
  {
    OpScope op(view.device(), "copy_");
    NoGradGuard noGrad;
    copyInto(view, b);
  }
  if (!grad) return;
  auto node = std::make_shared<CopySlicesNode>(base, view, b.sizes(), b.dtype());
  node->nextEdges = {gradientEdge(base), gradientEdge(b)};
  setHistory(base, node);
}

}  // namespace matmulviz
