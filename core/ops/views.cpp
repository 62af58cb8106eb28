// View ops: slice, narrow, select, view, reshape, permute, transpose, expand, (un)squeeze.
// Rules and messages from aten/src/ATen/native/TensorShape.cpp and ATen/TensorUtils.cpp.
#include "core/autograd/node.h"
#include "core/ops/ops.h"
#include "core/ops/shape_rules.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>

namespace matmulviz {

namespace {

/// A backward that scatters the gradient of a view into zeros of the input's shape
/// (slice_backward, select_backward: they materialise the whole input gradient).
class ScatterViewBackward final : public Node {
 public:
  enum Kind { Slice, Select };
  ScatterViewBackward(Kind kind, Shape inputSizes, int64_t dim, int64_t start, int64_t end,
                      int64_t step)
      : kind_(kind),
        inputSizes_(std::move(inputSizes)),
        dim_(dim),
        start_(start),
        end_(end),
        step_(step) {}
  std::string name() const override {
    return kind_ == Slice ? "SliceBackward0" : "SelectBackward0";
  }
  TensorList apply(TensorList&& g) override {
    OpScope op(g[0].device(), name());
    Tensor gi =
        zeros(inputSizes_, g[0].dtype(), g[0].storage().devicePtr(),
              kind_ == Slice ? "grad of slice input (zeros)" : "grad of select input (zeros)");
    const Tensor part =
        kind_ == Slice ? slice(gi, dim_, start_, end_, step_) : select(gi, dim_, start_);
    copyInto(part, g[0]);
    return {gi};
  }

 private:
  Kind kind_;
  Shape inputSizes_;
  int64_t dim_, start_, end_, step_;
};

/// Backward of ops that only re-shape: the gradient is reshaped back.
class ReshapeBackward final : public Node {
 public:
  ReshapeBackward(std::string name, Shape inputSizes)
      : name_(std::move(name)), inputSizes_(std::move(inputSizes)) {}
  std::string name() const override { return name_; }
  TensorList apply(TensorList&& g) override { return {reshape(g[0], inputSizes_)}; }

 private:
  std::string name_;
  Shape inputSizes_;
};

class PermuteBackward final : public Node {
 public:
  PermuteBackward(std::string name, std::vector<int64_t> inverse)
      : name_(std::move(name)), inverse_(std::move(inverse)) {}
  std::string name() const override { return name_; }
  TensorList apply(TensorList&& g) override { return {permute(g[0], inverse_)}; }

 private:
  std::string name_;
  std::vector<int64_t> inverse_;
};

class ExpandBackward final : public Node {
 public:
  explicit ExpandBackward(Shape inputSizes) : inputSizes_(std::move(inputSizes)) {}
  std::string name() const override { return "ExpandBackward0"; }
  TensorList apply(TensorList&& g) override { return {sumTo(g[0], inputSizes_)}; }

 private:
  Shape inputSizes_;
};

/// Records `node` for the view `out` of `input`; in no_grad mode, a view of a tensor that
/// requires grad still requires grad (TensorImpl::requiresGradViaBase).
template <typename MakeNode>
Tensor withHistory(Tensor out, const Tensor& input, MakeNode&& makeNode) {
  if (anyRequiresGrad({&input})) {  // the node (and its copy of the sizes) only when recorded
    std::shared_ptr<Node> node = makeNode();
    node->nextEdges = {gradientEdge(input)};
    setHistory(out, node);
  } else if (input.requiresGrad()) {
    out.impl()->requiresGradViaBase = true;
  }
  return out;
}

/// SplitBackward0 and SplitWithSizesBackward0 (FunctionsManual.cpp: split_with_sizes_backward):
/// one node for all the pieces; an undefined piece gradient becomes zeros, then all are cat.
class SplitBackward final : public Node {
 public:
  SplitBackward(std::string name, Shape inputSizes, std::vector<int64_t> lengths, int64_t dim)
      : name_(std::move(name)),
        inputSizes_(std::move(inputSizes)),
        lengths_(std::move(lengths)),
        dim_(dim) {}
  std::string name() const override { return name_; }
  TensorList apply(TensorList&& g) override {
    const Tensor* some = nullptr;
    for (const Tensor& x : g)
      if (x.defined()) some = &x;
    if (!some) return {Tensor()};
    TensorList parts(lengths_.size());
    for (size_t i = 0; i < lengths_.size(); ++i) {
      if (i < g.size() && g[i].defined()) {
        parts[i] = g[i];
        continue;
      }
      Shape sizes = inputSizes_;
      sizes[dim_] = lengths_[i];
      parts[i] =
          zeros(sizes, some->dtype(), some->storage().devicePtr(), "grad of split output (zeros)");
    }
    return {cat(parts, dim_)};
  }

 private:
  std::string name_;
  Shape inputSizes_;
  std::vector<int64_t> lengths_;
  int64_t dim_;
};

/// at::infer_size: resolves one -1 and checks the element count.
Shape inferSize(Shape sizes, int64_t numel) {
  int64_t known = 1;
  std::optional<size_t> inferred;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      if (inferred) throw std::invalid_argument("only one dimension can be inferred");
      inferred = i;
    } else if (sizes[i] < 0) {
      throw std::invalid_argument("invalid shape dimension " + std::to_string(sizes[i]));
    } else {
      known *= sizes[i];
    }
  }
  if (inferred) {
    if (known == 0 || numel % known != 0)
      throw std::invalid_argument("shape '" + shapeToString(sizes) +
                                  "' is invalid for input of size " + std::to_string(numel));
    sizes[*inferred] = numel / known;
  } else if (known != numel) {
    throw std::invalid_argument("shape '" + shapeToString(sizes) +
                                "' is invalid for input of size " + std::to_string(numel));
  }
  return sizes;
}

/// at::detail::computeStride: strides of a view with `newShape`, or none when impossible.
std::optional<Shape> computeStride(const Shape& oldShape, const Shape& oldStride,
                                   const Shape& newShape) {
  if (oldShape.empty()) return Shape(newShape.size(), 1);
  Shape newStride(newShape.size(), 0);
  if (numelOf(oldShape) == 0) return contiguousStrides(newShape);
  auto viewD = static_cast<int64_t>(newShape.size()) - 1;
  int64_t chunkBaseStride = oldStride.back();
  int64_t tensorNumel = 1, viewNumel = 1;
  for (auto tensorD = static_cast<int64_t>(oldShape.size()) - 1; tensorD >= 0; --tensorD) {
    tensorNumel *= oldShape[tensorD];
    if (tensorD == 0 ||
        (oldShape[tensorD - 1] != 1 && oldStride[tensorD - 1] != tensorNumel * chunkBaseStride)) {
      while (viewD >= 0 && (viewNumel < tensorNumel || newShape[viewD] == 1)) {
        newStride[viewD] = viewNumel * chunkBaseStride;
        viewNumel *= newShape[viewD];
        --viewD;
      }
      if (viewNumel != tensorNumel) return std::nullopt;
      if (tensorD > 0) {
        chunkBaseStride = oldStride[tensorD - 1];
        tensorNumel = 1;
        viewNumel = 1;
      }
    }
  }
  if (viewD != -1) return std::nullopt;
  return newStride;
}

/// The pieces of a split along `dim` (views), outputs 0..n-1 of one node named `name`.
std::vector<Tensor> splitPieces(const Tensor& t, const std::vector<int64_t>& lengths, int64_t dim,
                                const std::string& name) {
  std::vector<Tensor> pieces;
  int64_t start = 0;
  for (int64_t len : lengths) {
    Shape sizes = t.sizes();
    sizes[dim] = len;
    pieces.push_back(makeView(t, sizes, t.strides(), t.storageOffset() + start * t.stride(dim)));
    start += len;
  }
  if (anyRequiresGrad({&t})) {
    auto node = std::make_shared<SplitBackward>(name, t.sizes(), lengths, dim);
    node->nextEdges = {gradientEdge(t)};
    for (size_t i = 0; i < pieces.size(); ++i)
      setHistory(pieces[i], node, static_cast<uint32_t>(i));
  } else if (t.requiresGrad()) {
    for (Tensor& p : pieces) p.impl()->requiresGradViaBase = true;
  }
  return pieces;
}

}  // namespace

Tensor slice(const Tensor& t, int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (t.dim() == 0) throw std::out_of_range("slice() cannot be applied to a 0-dim tensor.");
  dim = wrapDim(dim, t.dim());
  if (step <= 0) throw std::invalid_argument("slice step must be positive");
  const int64_t n = t.size(dim);
  if (start < 0) start += n;
  if (end < 0) end += n;
  start = std::clamp<int64_t>(start, 0, n);
  end = std::clamp<int64_t>(end, start, n);
  Shape sizes = t.sizes(), strides = t.strides();
  sizes[dim] = (end - start + step - 1) / step;
  strides[dim] *= step;
  Tensor out =
      makeView(t, std::move(sizes), std::move(strides), t.storageOffset() + start * t.stride(dim));
  return withHistory(out, t, [&] {
    return std::make_shared<ScatterViewBackward>(ScatterViewBackward::Slice, t.sizes(), dim, start,
                                                 end, step);
  });
}

Tensor narrow(const Tensor& t, int64_t dim, int64_t start, int64_t length) {
  dim = wrapDim(dim, t.dim());
  // PyTorch wraps a negative start as a dim (maybe_wrap_dim(start, size)): "Dimension out of
  // range (expected to be in range of [-size, size-1], but got start)".
  if (start < 0) start = wrapDim(start, t.size(dim));
  if (length < 0) throw std::invalid_argument("narrow(): length must be non-negative.");
  if (start + length > t.size(dim))
    throw std::invalid_argument("start (" + std::to_string(start) + ") + length (" +
                                std::to_string(length) + ") exceeds dimension size (" +
                                std::to_string(t.size(dim)) + ").");
  return slice(t, dim, start, start + length, 1);
}

Tensor select(const Tensor& t, int64_t dim, int64_t index) {
  if (t.dim() == 0) throw std::out_of_range("select() cannot be applied to a 0-dim tensor.");
  dim = wrapDim(dim, t.dim());
  const int64_t n = t.size(dim);
  if (index < -n || index >= n)
    throw std::out_of_range("select(): index " + std::to_string(index) +
                            " out of range for tensor of size " + shapeToString(t.sizes()) +
                            " at dimension " + std::to_string(dim));
  if (index < 0) index += n;
  Shape sizes = t.sizes(), strides = t.strides();
  sizes.erase(sizes.begin() + dim);
  strides.erase(strides.begin() + dim);
  Tensor out =
      makeView(t, std::move(sizes), std::move(strides), t.storageOffset() + index * t.stride(dim));
  return withHistory(out, t, [&] {
    return std::make_shared<ScatterViewBackward>(ScatterViewBackward::Select, t.sizes(), dim, index,
                                                 index + 1, 1);
  });
}

Tensor view(const Tensor& t, Shape sizes) {
  sizes = inferSize(std::move(sizes), t.numel());
  auto strides = computeStride(t.sizes(), t.strides(), sizes);
  if (!strides)
    throw std::invalid_argument(
        "view size is not compatible with input tensor's size and stride (at least one dimension "
        "spans across two contiguous subspaces). Use .reshape(...) instead.");
  Tensor out = makeView(t, std::move(sizes), std::move(*strides), t.storageOffset());
  return withHistory(out, t,
                     [&] { return std::make_shared<ReshapeBackward>("ViewBackward0", t.sizes()); });
}

Tensor reshape(const Tensor& t, Shape sizes) {
  sizes = inferSize(std::move(sizes), t.numel());
  if (auto strides = computeStride(t.sizes(), t.strides(), sizes)) {
    Tensor out = makeView(t, std::move(sizes), std::move(*strides),
                          t.storageOffset());  // at::_reshape_alias
    return withHistory(out, t, [&] {
      return std::make_shared<ReshapeBackward>("ReshapeAliasBackward0", t.sizes());
    });
  }
  return unsafeView(clone(t, MemoryFormat::Contiguous), sizes);
}

Tensor permute(const Tensor& t, const std::vector<int64_t>& dims) {
  if (static_cast<int64_t>(dims.size()) != t.dim())
    throw std::invalid_argument(
        // sic: PyTorch 1.13's message names sparse_coo for dense tensors too
        "permute(sparse_coo): number of dimensions in the tensor input does not match the length "
        "of the desired ordering of dimensions i.e. input.dim() = " +
        std::to_string(t.dim()) + " is not equal to len(dims) = " + std::to_string(dims.size()));
  Shape sizes(dims.size()), strides(dims.size());
  std::vector<int64_t> inverse(dims.size(), -1);
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = wrapDim(dims[i], t.dim());
    if (inverse[d] != -1) throw std::invalid_argument("permute(): duplicate dims are not allowed.");
    inverse[d] = static_cast<int64_t>(i);
    sizes[i] = t.size(d);
    strides[i] = t.stride(d);
  }
  Tensor out = makeView(t, std::move(sizes), std::move(strides), t.storageOffset());
  return withHistory(
      out, t, [&] { return std::make_shared<PermuteBackward>("PermuteBackward0", inverse); });
}

Tensor transpose(const Tensor& t, int64_t dim0, int64_t dim1) {
  std::vector<int64_t> dims(static_cast<size_t>(t.dim()));
  for (int64_t i = 0; i < t.dim(); ++i) dims[i] = i;
  std::swap(dims[wrapDim(dim0, t.dim())], dims[wrapDim(dim1, t.dim())]);
  Shape sizes(dims.size()), strides(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    sizes[i] = t.size(dims[i]);
    strides[i] = t.stride(dims[i]);
  }
  Tensor out = makeView(t, std::move(sizes), std::move(strides), t.storageOffset());
  return withHistory(out, t,
                     [&] { return std::make_shared<PermuteBackward>("TransposeBackward0", dims); });
}

Tensor expand(const Tensor& t, Shape sizes) {
  if (static_cast<int64_t>(sizes.size()) < t.dim())
    throw std::invalid_argument("expand: the number of sizes provided (" +
                                std::to_string(sizes.size()) +
                                ") must be greater or equal to the number of dimensions in the "
                                "tensor (" +
                                std::to_string(t.dim()) + ")");
  const int64_t lead = static_cast<int64_t>(sizes.size()) - t.dim();
  Shape strides(sizes.size(), 0);
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 1; i >= 0; --i) {
    const int64_t j = i - lead;
    if (j < 0) {
      if (sizes[i] < 0)
        throw std::invalid_argument(
            "expand: -1 is not allowed in a leading, non-existing dimension");
      // inferExpandGeometry (ATen/ExpandUtils.cpp): a new size-1 dim gets the stride a
      // contiguous tensor would have there; a broadcast one gets 0.
      const bool inner = i + 1 < static_cast<int64_t>(sizes.size());
      strides[i] = sizes[i] == 1 && t.dim() > 0 && inner ? sizes[i + 1] * strides[i + 1] : 0;
      continue;
    }
    const int64_t have = t.size(j);
    if (sizes[i] == -1) sizes[i] = have;
    if (have == sizes[i]) {
      strides[i] = t.stride(j);
    } else if (have == 1) {
      strides[i] = 0;
    } else {
      throw std::invalid_argument("The expanded size of the tensor (" + std::to_string(sizes[i]) +
                                  ") must match the existing size (" + std::to_string(have) +
                                  ") at non-singleton dimension " + std::to_string(i) +
                                  ".  Target sizes: " + shapeToString(sizes) +
                                  ".  Tensor sizes: " + t.shapeString());
    }
  }
  Tensor out = makeView(t, std::move(sizes), std::move(strides), t.storageOffset());
  return withHistory(out, t, [&] { return std::make_shared<ExpandBackward>(t.sizes()); });
}

Tensor unsqueeze(const Tensor& t, int64_t dim) {
  dim = wrapDim(dim, t.dim() + 1);
  Shape sizes = t.sizes(), strides = t.strides();
  const int64_t stride = dim < t.dim() ? t.stride(dim) * t.size(dim) : 1;
  sizes.insert(sizes.begin() + dim, 1);
  strides.insert(strides.begin() + dim, stride);
  Tensor out = makeView(t, std::move(sizes), std::move(strides), t.storageOffset());
  return withHistory(
      out, t, [&] { return std::make_shared<ReshapeBackward>("UnsqueezeBackward0", t.sizes()); });
}

namespace {

/// The view of squeeze(dim): `t`'s geometry without `dim` when its size is 1, else the same
/// geometry (at::squeeze returns self.as_strided(sizes, strides), a new view, either way).
Tensor squeezedView(const Tensor& t, int64_t dim) {
  Shape sizes = t.sizes(), strides = t.strides();
  if (t.dim() > 0) {
    dim = wrapDim(dim, t.dim());
    if (t.size(dim) == 1) {
      sizes.erase(sizes.begin() + dim);
      strides.erase(strides.begin() + dim);
    }
  } else {
    wrapDim(dim, 1);  // a 0-dim tensor takes dim 0 or -1
  }
  return makeView(t, std::move(sizes), std::move(strides), t.storageOffset());
}

}  // namespace

Tensor squeeze(const Tensor& t, int64_t dim) {
  return withHistory(squeezedView(t, dim), t, [&] {
    return std::make_shared<ReshapeBackward>("SqueezeBackward1", t.sizes());
  });
}

Tensor squeezeResult(const Tensor& t, int64_t dim) {
  return withHistory(squeezedView(t, dim), t, [&] {
    return std::make_shared<ReshapeBackward>("SqueezeBackward3", t.sizes());
  });
}

Tensor squeeze(const Tensor& t) {
  Shape sizes, strides;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.size(d) == 1) continue;
    sizes.push_back(t.size(d));
    strides.push_back(t.stride(d));
  }
  Tensor out = makeView(t, std::move(sizes), std::move(strides), t.storageOffset());
  return withHistory(
      out, t, [&] { return std::make_shared<ReshapeBackward>("SqueezeBackward0", t.sizes()); });
}

Tensor tMatrix(const Tensor& t) {
  if (t.dim() > 2)
    throw std::invalid_argument("t() expects a tensor with <= 2 dimensions, but self is " +
                                std::to_string(t.dim()) + "D");
  const int64_t last = std::max<int64_t>(t.dim() - 1, 0);
  Shape sizes(t.sizes().rbegin(), t.sizes().rend());
  Shape strides(t.strides().rbegin(), t.strides().rend());
  Tensor out = makeView(t, std::move(sizes), std::move(strides), t.storageOffset());
  std::vector<int64_t> dims{last, 0};
  dims.resize(static_cast<size_t>(t.dim()));
  return withHistory(out, t, [&] { return std::make_shared<PermuteBackward>("TBackward0", dims); });
}

std::vector<Tensor> splitWithSizes(const Tensor& t, const std::vector<int64_t>& sizes,
                                   int64_t dim) {
  if (t.dim() == 0) throw std::out_of_range("split expects at least a 1-dimensional tensor");
  dim = wrapDim(dim, t.dim());
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0)
      throw std::invalid_argument(
          "split_with_sizes expects split_sizes have only non-negative entries, but got "
          "split_sizes=" +
          shapeToString(sizes));
    total += s;
  }
  if (total != t.size(dim))
    throw std::invalid_argument("split_with_sizes expects split_sizes to sum exactly to " +
                                std::to_string(t.size(dim)) +
                                " (input tensor's size at dimension " + std::to_string(dim) +
                                "), but got split_sizes=" + shapeToString(sizes));
  return splitPieces(t, sizes, dim, "SplitWithSizesBackward0");
}

std::vector<Tensor> split(const Tensor& t, int64_t size, int64_t dim) {
  if (t.dim() == 0) throw std::out_of_range("split expects at least a 1-dimensional tensor");
  dim = wrapDim(dim, t.dim());
  if (size < 0)
    throw std::invalid_argument("split expects split_size be non-negative, but got split_size=" +
                                std::to_string(size));
  const int64_t n = t.size(dim);
  if (size == 0 && n != 0)
    throw std::invalid_argument(
        "split_size can only be 0 if dimension size is 0, but got "
        "dimension size of " +
        std::to_string(n));
  const int64_t pieces = size == 0 ? 1 : std::max<int64_t>((n + size - 1) / size, 1);
  std::vector<int64_t> lengths(static_cast<size_t>(pieces), size);
  lengths.back() = size - (size * pieces - n);
  return splitPieces(t, lengths, dim, "SplitBackward0");
}

std::vector<Tensor> chunk(const Tensor& t, int64_t chunks, int64_t dim) {
  if (chunks <= 0)
    throw std::invalid_argument("chunk expects `chunks` to be greater than 0, got: " +
                                std::to_string(chunks));
  if (t.dim() == 0) throw std::out_of_range("chunk expects at least a 1-dimensional tensor");
  dim = wrapDim(dim, t.dim());
  const int64_t n = t.size(dim);
  const int64_t size = (n + chunks - 1) / chunks;
  if (size == 0 && n == 0) {
    std::vector<int64_t> sizes(static_cast<size_t>(chunks), 0);
    return splitWithSizes(t, sizes, dim);
  }
  return split(t, size, dim);
}

}  // namespace matmulviz

namespace matmulviz {

Tensor unsafeView(const Tensor& t, Shape sizes) {
  sizes = inferSize(std::move(sizes), t.numel());
  auto strides = computeStride(t.sizes(), t.strides(), sizes);
  if (!strides) return reshape(t, sizes);
  Tensor out = makeView(t, std::move(sizes), std::move(*strides), t.storageOffset());
  return withHistory(
      out, t, [&] { return std::make_shared<ReshapeBackward>("UnsafeViewBackward0", t.sizes()); });
}

Tensor mT(const Tensor& t) {
  if (t.dim() < 2)
    throw std::invalid_argument(
        "tensor.mT is only supported on matrices or batches of matrices. Got " +
        std::to_string(t.dim()) + "-D tensor.");
  return transpose(t, -2, -1);
}

}  // namespace matmulviz
