// Tensor.__getitem__ and __setitem__ as PyTorch applies them (torch/csrc/autograd/
// python_variable_indexing.cpp): ints and 0-dim integer tensors select (views), slices narrow
// (views), None adds a dim, ... stands for the dims not named, and an integer tensor (or a list
// of ints) is advanced indexing: a copy (several: core's indexTensors, at::index with an index
// list). A bool tensor is a mask over as many dims as it has. Assignment: index_put_ through
// index tensors (core's indexPut, indexPutWithMask), else copy_ into the view, recorded as
// CopySlices when autograd needs it (core's copyIntoRecorded).
#include "core/autograd/grad_mode.h"
#include "core/ops/ops.h"
#include "python/src/bindings.h"
#include "python/src/errors.h"

#include <pybind11/stl.h>

#include <optional>
#include <vector>

namespace py = pybind11;

namespace matmulviz::python {

namespace {

/// An integer tensor used as an index, and the dim of the result it applies to.
struct AdvancedIndex {
  int64_t dim;
  Tensor indices;
};

/// What one item of an index tuple is, decided once per item with cheap type checks (this runs
/// for every `a[i:i + 1, :, :]` of a Python loop).
enum class Item { Int, Slice, None, Ellipsis, ScalarTensor, Tensor, Mask, List, Bool, Other };

Item classify(py::handle item) {
  PyObject* o = item.ptr();
  if (PyBool_Check(o)) return Item::Bool;
  if (PyLong_Check(o)) return Item::Int;
  if (PySlice_Check(o)) return Item::Slice;
  if (o == Py_None) return Item::None;
  if (o == Py_Ellipsis) return Item::Ellipsis;
  if (isTensor(o)) {
    const Tensor& t = tensorOf(o);
    if (t.dtype() == DType::Bool) return Item::Mask;
    return t.dim() == 0 && t.dtype() == DType::Int64 ? Item::ScalarTensor : Item::Tensor;
  }
  if (PyList_Check(o)) return Item::List;
  return Item::Other;
}

/// PyTorch's applySelect: the bounds check names the indexed tensor's dim (`realDim`), not the
/// dim of the partly indexed result.
Tensor applySelect(const Tensor& t, int64_t dim, int64_t index, int64_t realDim) {
  const int64_t size = t.size(dim);
  if (index < -size || index >= size)
    throw std::out_of_range("index " + std::to_string(index) + " is out of bounds for dimension " +
                            std::to_string(realDim) + " with size " + std::to_string(size));
  return select(t, dim, index);
}

/// The dims an index tuple names: a mask names as many as it has (count_specified_dimensions).
int64_t specifiedDims(const std::vector<Item>& kinds, const py::tuple& items) {
  int64_t n = 0;
  for (size_t i = 0; i < kinds.size(); ++i) {
    if (kinds[i] == Item::Mask)
      n += tensorOf(items[i].ptr()).dim();
    else if (kinds[i] != Item::None && kinds[i] != Item::Ellipsis)
      ++n;
  }
  return n;
}

Tensor indexTensorOf(py::handle item) {
  if (isTensor(item.ptr())) {
    Tensor t = item.cast<Tensor>();
    if (t.dtype() != DType::Int64)
      throw std::out_of_range("tensors used as indices must be long, byte or bool tensors");
    return t;
  }
  // A list of ints: PyTorch makes an int64 tensor of it.
  std::vector<double> values;
  for (py::handle v : item.cast<py::sequence>()) {
    if (!py::isinstance<py::int_>(v))
      throw NotSupported("indexing with a nested list or a list of non-integers");
    values.push_back(static_cast<double>(v.cast<int64_t>()));
  }
  return fromDoubles({static_cast<int64_t>(values.size())}, values, DType::Int64);
}

/// Applies ints, slices, None and ... (the views); collects integer tensors for later.
Tensor applySlicing(const Tensor& self, const py::tuple& items, std::vector<AdvancedIndex>& adv) {
  std::vector<Item> kinds;
  kinds.reserve(items.size());
  for (py::handle item : items) kinds.push_back(classify(item));
  Tensor result = self;
  int64_t dim = 0;
  int64_t realDim = 0;  // the dim of `self` the item indexes
  const int64_t specified = specifiedDims(kinds, items);
  if (specified > self.dim())
    throw std::out_of_range("too many indices for tensor of dimension " +
                            std::to_string(self.dim()));
  for (size_t i = 0; i < kinds.size(); ++i) {
    const py::handle item = items[i];
    switch (kinds[i]) {
      case Item::Int:
        result = applySelect(result, dim, item.cast<int64_t>(), realDim++);
        break;
      case Item::ScalarTensor: {
        // PyTorch reads a 0-dim integer index with item() and selects (TensorIndexing.h,
        // applySlicing): a view, no allocation. In meta mode the value is unknown, and only the
        // view's storage offset depends on it; it is taken as 0.
        const Tensor& t = tensorOf(item.ptr());
        const int64_t index =
            t.hasData() ? static_cast<int64_t>(hostReadable(t, "index").item()) : 0;
        result = applySelect(result, dim, index, realDim++);
        break;
      }
      case Item::Slice: {
        Py_ssize_t start = 0, stop = 0, step = 0;
        if (PySlice_Unpack(item.ptr(), &start, &stop, &step) < 0) throw py::error_already_set();
        if (step <= 0) throw py::value_error("step must be greater than zero");
        const int64_t length = result.size(dim);
        PySlice_AdjustIndices(length, &start, &stop, step);
        if (!(start == 0 && stop == length && step == 1))  // PyTorch's applySlice returns self
          result = slice(result, dim, start, std::max<Py_ssize_t>(stop, start), step);
        ++dim;
        ++realDim;
        break;
      }
      case Item::None:
        result = unsqueeze(result, dim);
        ++dim;
        break;
      case Item::Ellipsis:
        dim += self.dim() - specified;
        realDim += self.dim() - specified;
        break;
      case Item::Tensor:
      case Item::List:
        adv.push_back({dim, indexTensorOf(item)});
        ++dim;
        ++realDim;
        break;
      case Item::Mask: {
        const Tensor& mask = tensorOf(item.ptr());
        if (mask.dim() == 0) throw NotSupported("indexing with a 0-dim bool tensor");
        adv.push_back({dim, mask});
        dim += mask.dim();
        realDim += mask.dim();
        break;
      }
      case Item::Bool:
        throw NotSupported("indexing with a Python bool");
      case Item::Other:
        throw py::index_error(
            "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
            "valid indices (got " +
            std::string(py::str(py::type::of(item).attr("__name__"))) + ")");
    }
  }
  return result;
}

/// PyTorch's check of a bool mask over t's dims from `d` on (IndexingUtils.h invalid_mask).
void checkMaskShape(const Tensor& t, int64_t d, const Tensor& mask) {
  for (int64_t j = 0; j < mask.dim(); ++j)
    if (mask.size(j) != t.size(d + j))
      throw std::out_of_range("The shape of the mask " + mask.shapeString() + " at index " +
                              std::to_string(j) +
                              " does not match the shape of the indexed tensor " + t.shapeString() +
                              " at index " + std::to_string(d + j));
}

/// t's dims d .. d + k - 1 moved to the front (a view).
Tensor maskedDimsToFront(const Tensor& t, int64_t d, int64_t k) {
  std::vector<int64_t> toFront;
  for (int64_t i = d; i < d + k; ++i) toFront.push_back(i);
  for (int64_t i = 0; i < t.dim(); ++i)
    if (i < d || i >= d + k) toFront.push_back(i);
  return permute(t, toFront);
}

/// A bool mask over the dims from `d` on: PyTorch's shape check, then core's indexWithMask with
/// the masked dims moved to the front, the selection put back at d.
Tensor applyMask(const Tensor& t, int64_t d, const Tensor& mask) {
  checkMaskShape(t, d, mask);
  if (!mask.hasData() || !t.hasData())
    throw NotSupported(
        "boolean-mask indexing on the meta CUDA mode (the result's size depends on the mask's "
        "values)");
  if (d == 0) return indexWithMask(t, mask);
  const Tensor gathered = indexWithMask(maskedDimsToFront(t, d, mask.dim()), mask);
  // gathered: [n, dims before d..., dims after the mask's...] -> n at d.
  std::vector<int64_t> order;
  for (int64_t i = 0; i < d; ++i) order.push_back(1 + i);
  order.push_back(0);
  for (int64_t i = d + 1; i < gathered.dim(); ++i) order.push_back(i);
  return permute(gathered, order);
}

/// The index list at::index takes: the integer tensors at their dims, nullopt elsewhere. A bool
/// mask among them becomes the columns of its nonzero() at the dims it covers, as at::index's
/// expandTensors does (the nonzero index lives as long as the list).
std::vector<std::optional<Tensor>> indexList(const Tensor& t,
                                             const std::vector<AdvancedIndex>& adv) {
  std::vector<std::optional<Tensor>> list;
  for (const AdvancedIndex& a : adv) {
    if (a.indices.dtype() == DType::Bool) {
      checkMaskShape(t, a.dim, a.indices);
      const Tensor nz = nonzero(a.indices);
      list.resize(static_cast<size_t>(a.dim + a.indices.dim()));
      for (int64_t j = 0; j < a.indices.dim(); ++j)
        list[static_cast<size_t>(a.dim + j)] = select(nz, 1, j);
      continue;
    }
    if (a.indices.dtype() != DType::Int64)
      throw std::out_of_range("tensors used as indices must be long, byte or bool tensors");
    list.resize(static_cast<size_t>(a.dim) + 1);
    list[static_cast<size_t>(a.dim)] = a.indices;
  }
  return list;
}

/// One integer tensor at result dim `d`: t[..., idx, ...] (a copy whose dims are those before
/// d, the index's, then those after d, laid out as PyTorch lays them out: core's indexDim).
/// Several: core's indexTensors with the index list over t's dims.
Tensor applyAdvanced(const Tensor& t, const std::vector<AdvancedIndex>& adv) {
  if (adv.empty()) return t;
  if (adv.size() > 1) return indexTensors(t, indexList(t, adv));
  const Tensor& idx = adv[0].indices;
  if (idx.dtype() == DType::Bool) return applyMask(t, adv[0].dim, idx);
  if (idx.dtype() != DType::Int64)
    throw std::out_of_range("tensors used as indices must be long, byte or bool tensors");
  return indexDim(t, adv[0].dim, idx);
}

py::tuple asTuple(const py::object& index) {
  if (PyTuple_Check(index.ptr())) return py::reinterpret_borrow<py::tuple>(index);
  return py::make_tuple(index);
}

Tensor getItem(const Tensor& self, const py::object& index) {
  if (PyBool_Check(index.ptr())) throw NotSupported("indexing with a Python bool");
  if (PyLong_Check(index.ptr())) {  // THPVariable_getitem's fast path: applySelect
    if (self.dim() == 0)
      throw std::out_of_range(
          "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` "
          "in C++ to convert a 0-dim tensor to a number");
    return applySelect(self, 0, index.cast<int64_t>(), 0);
  }
  std::vector<AdvancedIndex> adv;
  const Tensor sliced = applySlicing(self, asTuple(index), adv);
  return applyAdvanced(sliced, adv);
}

void assignItem(const Tensor& self, const py::object& index, const py::object& value) {
  std::vector<AdvancedIndex> adv;
  const Tensor target = applySlicing(self, asTuple(index), adv);
  const bool masked = adv.size() == 1 && adv[0].indices.dtype() == DType::Bool;
  if (GradMode::isEnabled() && self.requiresGrad() && self.isLeaf())
    throw std::logic_error(
        "a view of a leaf Variable that requires grad is being used in an in-place operation.");
  Tensor source;
  if (isTensor(value.ptr())) {
    source = value.cast<Tensor>();
  } else if (py::isinstance<py::float_>(value) || py::isinstance<py::int_>(value)) {
    source = fromDoubles({}, {value.cast<double>()}, target.dtype());
  } else {
    throw py::type_error("can't assign a " +
                         std::string(py::str(py::type::of(value).attr("__name__"))) + " to a " +
                         std::string("torch.") + std::string(dtypeName(self.dtype())) + " tensor");
  }
  if (adv.empty()) {  // a view of self: copy_, CopySlices when autograd records it
    copyIntoRecorded(self, target, source);
    return;
  }
  const bool grad = GradMode::isEnabled() && (self.requiresGrad() || source.requiresGrad());
  if (!masked) {  // index_put_ with integer tensors, IndexPutBackward0 when autograd records it
    if (grad && target.impl() != self.impl())
      throw NotSupported(
          "assignment through an index tensor into a view (a sliced or selected tensor) when "
          "autograd records it (CopySlices around IndexPutBackward0)");
    indexPut(target, indexList(target, adv),
             source.dtype() == target.dtype() || source.numel() != 1 || source.device() != nullptr
                 ? source
                 : toDType(source, target.dtype()));
    return;
  }
  if (grad)
    throw NotSupported(
        "assignment through a boolean mask into or from a tensor that requires grad "
        "(IndexPutBackward0)");
  NoGradGuard noGrad;
  {  // index_put_ with a mask (masked_fill_ for a scalar)
    const Tensor& mask = adv[0].indices;
    checkMaskShape(target, adv[0].dim, mask);
    if (!mask.hasData() && !(source.numel() == 1 && source.device() == nullptr))
      throw NotSupported("assignment through a boolean mask on the meta CUDA mode");
    const int64_t d = adv[0].dim, k = mask.dim();
    Tensor values = source;
    if (d > 0 && !(source.numel() == 1 && source.device() == nullptr)) {
      // The values are shaped as t[..., mask, ...] is: [dims before d, n, dims after the mask's];
      // core takes them with n first, as the masked dims are moved to the front.
      int64_t n = 0;
      for (double v : hostReadable(mask, "mask on the host").toDoubles()) n += v != 0;
      Shape result(target.sizes().begin(), target.sizes().begin() + d);
      result.push_back(n);
      result.insert(result.end(), target.sizes().begin() + d + k, target.sizes().end());
      bool broadcasts = source.dim() <= static_cast<int64_t>(result.size());
      for (int64_t i = 1; broadcasts && i <= source.dim(); ++i) {
        const int64_t v = source.size(-i), want = result[result.size() - static_cast<size_t>(i)];
        broadcasts = v == want || v == 1;
      }
      if (!broadcasts)
        throw std::invalid_argument(
            "shape mismatch: value tensor of shape " + source.shapeString() +
            " cannot be broadcast to indexing result of shape " + shapeToString(result));
      std::vector<int64_t> order{d};
      for (int64_t i = 0; i < static_cast<int64_t>(result.size()); ++i)
        if (i != d) order.push_back(i);
      values = permute(expand(source, result), order);
    }
    indexPutWithMask(maskedDimsToFront(target, d, k), mask, values);
  }
}

}  // namespace

/// Tensor.__setitem__: the assignment, then one bump of the storage's version counter (as each
/// in-place op of PyTorch), so that a backward reading the old values fails.
void setItem(const Tensor& self, const py::object& index, const py::object& value) {
  assignItem(self, index, value);
  self.storage().bumpVersion();
}

void bindIndexing(py::module_& m) {
  TensorClass cls(m.attr("Tensor"));
  cls.def("__getitem__", &getItem);
  cls.def("__setitem__", &setItem);
}

}  // namespace matmulviz::python
