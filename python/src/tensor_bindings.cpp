// The Tensor class: PyTorch's torch.Tensor methods over core's Tensor (a handle to a
// TensorImpl, so Python's reference count is the tensor's lifetime, as in PyTorch).
#include "core/autograd/engine.h"
#include "core/autograd/grad_mode.h"
#include "core/autograd/node.h"
#include "core/ops/ops.h"
#include "core/ops/shape_rules.h"
#include "python/src/bindings.h"
#include "python/src/convert.h"
#include "python/src/errors.h"
#include "python/src/runtime.h"

#include <pybind11/stl.h>

#include <algorithm>

namespace py = pybind11;

namespace matmulviz::python {

namespace {

/// `dim` of a tensor of `ndim` dims, a 0-dim tensor counting as one (c10::maybe_wrap_dim with
/// wrap_scalar, as Tensor.stride(dim) and flatten use it); core's wrapDim says the error.
int64_t wrapScalarDim(int64_t dim, int64_t ndim) {
  return wrapDim(dim, std::max<int64_t>(ndim, 1));
}

/// The class matmulviz._C.dtype, set once by bindTensor (it lives as long as the module).
/// (py::type::of<DType>() is not available for enums from pybind11 3 on.)
PyObject* dtypeClass = nullptr;

/// Whether `o` is a matmulviz._C.dtype.
bool isDType(py::handle o) {
  return PyObject_TypeCheck(o.ptr(), reinterpret_cast<PyTypeObject*>(dtypeClass)) != 0;
}

/// t.detach(): a new tensor on the same storage, outside the graph.
Tensor detach(const Tensor& t) {
  return makeView(t, t.sizes(), t.strides(), t.storageOffset());
}

/// Tensor.to(device, dtype): a copy only when something changes, as in PyTorch.
Tensor toDeviceAndDType(const Tensor& t, const std::optional<std::string>& device,
                        std::optional<DType> dtype, bool copy) {
  Tensor out = t;
  if (dtype && (*dtype != out.dtype() || copy)) out = toDType(out, *dtype);
  if (device) {
    const DevicePtr target = Runtime::instance().parseDevice(*device);
    if (target.get() != out.device() || (copy && !dtype))
      out = toDevice(out, target, target ? "to(cuda)" : "to(cpu)");
  }
  return out;
}

Tensor flatten(const Tensor& t, int64_t start, int64_t end) {
  if (t.dim() == 0) return reshape(t, {1});
  start = wrapScalarDim(start, t.dim());
  end = wrapScalarDim(end, t.dim());
  if (start > end)
    throw std::invalid_argument("flatten() has invalid args: start_dim cannot come after end_dim");
  if (start == end) return t;
  Shape sizes(t.sizes().begin(), t.sizes().begin() + start);
  int64_t n = 1;
  for (int64_t d = start; d <= end; ++d) n *= t.size(d);
  sizes.push_back(n);
  sizes.insert(sizes.end(), t.sizes().begin() + end + 1, t.sizes().end());
  return reshape(t, sizes);
}

py::object itemOf(const Tensor& t) {
  if (t.numel() != 1)
    throw py::value_error("only one element tensors can be converted to Python scalars");
  if (!t.hasData()) throw NotSupported("Tensor.item() on the meta CUDA mode (no data)");
  const Tensor h = hostReadable(t, "item()");
  const double v = h.item(0);
  if (t.dtype() == DType::Int64) return py::int_(static_cast<int64_t>(v));
  if (t.dtype() == DType::Bool) return py::bool_(v != 0);
  return py::float_(v);
}

py::object toList(const Tensor& t) {
  if (!t.hasData()) throw NotSupported("Tensor.tolist() on the meta CUDA mode (no data)");
  const Tensor h = hostReadable(t, "tolist()");
  const std::vector<double> v = h.toDoubles();
  const bool integral = t.dtype() == DType::Int64;
  const bool boolean = t.dtype() == DType::Bool;
  auto scalar = [&](size_t i) -> py::object {
    if (integral) return py::int_(static_cast<int64_t>(v[i]));
    if (boolean) return py::bool_(v[i] != 0);
    return py::float_(v[i]);
  };
  if (t.dim() == 0) return scalar(0);
  size_t pos = 0;
  std::function<py::list(int64_t)> build = [&](int64_t d) {
    py::list out;
    for (int64_t i = 0; i < t.size(d); ++i) {
      if (d + 1 == t.dim())
        out.append(scalar(pos++));
      else
        out.append(build(d + 1));
    }
    return out;
  };
  return build(0);
}

void backward(const Tensor& t, const std::optional<Tensor>& gradient, bool retainGraph);

}  // namespace

void backwardFromPython(const Tensor& root, const std::optional<Tensor>& gradient,
                        bool retainGraph) {
  backward(root, gradient, retainGraph);
}

namespace {

void backward(const Tensor& t, const std::optional<Tensor>& gradient, bool retainGraph) {
  if (!t.requiresGrad())
    throw std::logic_error(
        "element 0 of tensors does not require grad and does not have a grad_fn");
  Tensor g;
  if (gradient) {
    g = *gradient;
  } else {
    if (t.numel() != 1)
      throw std::logic_error("grad can be implicitly created only for scalar outputs");
    OpScope op(t.device(), "ones_like");
    // grad_output is gradient memory (core/memory/memory_category.h), as the engine's own.
    g = empty(t.sizes(), t.dtype(), t.storage().devicePtr(), "grad_output (ones)")
            .setCategory(MemoryCategory::Gradients);
    if (g.hasData()) {
      const Tensor one = fromDoubles(t.sizes(), {1.0}, t.dtype());
      copyInto(g, one);
    }
  }
  runBackward(t, g, retainGraph);
}

}  // namespace

void bindTensor(py::module_& m) {
  py::enum_<DType> dtype(m, "dtype");
  dtypeClass = dtype.ptr();
  dtype.value("float32", DType::Float32)
      .value("float16", DType::Float16)
      .value("bfloat16", DType::BFloat16)
      .value("float64", DType::Float64)
      .value("int64", DType::Int64)
      .value("bool", DType::Bool)
      .def("__repr__", [](DType d) { return "torch." + std::string(dtypeName(d)); })
      .def("__str__", [](DType d) { return "torch." + std::string(dtypeName(d)); })
      .def_property_readonly("is_floating_point", [](DType d) { return isFloating(d); })
      .def_property_readonly("itemsize", [](DType d) { return elementSize(d); });

  TensorClass cls(makeTensorType(m));  // python/src/tensor_type.h
  cls.def_property_readonly("_sizes", [](const Tensor& t) { return toTuple(t.sizes()); })
      .def_property_readonly("dtype", &Tensor::dtype)
      .def_property_readonly("_device_name",
                             [](const Tensor& t) { return Runtime::deviceName(t.device()); })
      .def_property_readonly("is_cuda", [](const Tensor& t) { return t.device() != nullptr; })
      .def_property_readonly("is_meta", [](const Tensor&) { return false; })
      .def_property_readonly("ndim", &Tensor::dim)
      .def("dim", &Tensor::dim)
      .def("numel", &Tensor::numel)
      .def("nelement", &Tensor::numel)
      .def("element_size", &Tensor::elementSize)
      .def("__len__",
           [](const Tensor& t) {
             if (t.dim() == 0) throw py::type_error("len() of a 0-d tensor");
             return t.size(0);
           })
      .def(
          "stride",
          [](const Tensor& t, std::optional<int64_t> dim) -> py::object {
            if (dim) return py::int_(t.stride(wrapScalarDim(*dim, t.dim())));
            return toTuple(t.strides());
          },
          py::arg("dim") = py::none())
      .def("storage_offset", &Tensor::storageOffset)
      .def("is_contiguous", &Tensor::isContiguous)
      .def("_is", [](const Tensor& a, const Tensor& b) { return a.impl() == b.impl(); })
      .def_property_readonly(
          "_impl_id",
          [](const Tensor& t) { return reinterpret_cast<std::uintptr_t>(t.impl().get()); })
      .def("_storage_nbytes", [](const Tensor& t) { return t.storage().nbytes(); })
      .def("data_ptr",
           [](const Tensor& t) { return reinterpret_cast<std::uintptr_t>(t.dataPtr()); })
      .def("_storage_id",
           [](const Tensor& t) { return reinterpret_cast<std::uintptr_t>(&t.storage()); })
      .def("_allocation_id", [](const Tensor& t) { return t.storage().allocationId(); })
      .def_property("_label", &Tensor::label,
                    [](const Tensor& t, const std::string& l) { t.setLabel(l); })
      // ---- autograd fields ----
      .def_property(
          "requires_grad", &Tensor::requiresGrad,
          [](Tensor& t, py::handle value) {  // THPVariable_set_requires_grad's checks
            if (!PyBool_Check(value.ptr())) throw std::logic_error("requires_grad must be a bool");
            const bool on = value.ptr() == Py_True;
            if (!t.isLeaf())
              throw std::logic_error(
                  on ? "you can only change requires_grad flags of leaf variables."
                     : "you can only change requires_grad flags of leaf variables. If you want to "
                       "use a computed variable in a subgraph that doesn't require "
                       "differentiation use var_no_grad = var.detach().");
            if (on && !isFloating(t.dtype()))
              throw std::logic_error(
                  "only Tensors of floating point and complex dtype can require gradients");
            t.setRequiresGrad(on);
          })
      .def(
          "requires_grad_",
          [](const py::object& self, py::handle requiresGrad) -> py::object {
            if (!isTensor(self.ptr())) throw py::type_error("requires_grad_() needs a Tensor");
            Tensor& t = tensorOf(self.ptr());
            if (!PyBool_Check(requiresGrad.ptr()))
              throw py::type_error(
                  "requires_grad_(): argument 'requires_grad' (position 1) must be bool, not " +
                  std::string(py::str(py::type::of(requiresGrad).attr("__name__"))));
            const bool on = requiresGrad.ptr() == Py_True;
            if (!t.isLeaf())
              throw std::logic_error(
                  "you can only change requires_grad flags of leaf variables. If you want to "
                  "use a computed variable in a subgraph that doesn't require differentiation "
                  "use var_no_grad = var.detach().");
            if (on && !isFloating(t.dtype()))
              throw std::logic_error("only Tensors of floating point dtype can require gradients");
            t.setRequiresGrad(on);
            return self;  // the same object, as in PyTorch
          },
          py::arg("requires_grad") = py::bool_(true))
      .def_property_readonly("is_leaf", &Tensor::isLeaf)
      .def_property(
          "grad",
          [](const Tensor& t) -> std::optional<Tensor> {
            Tensor g = t.grad();
            if (!g.defined()) return std::nullopt;
            return g;
          },
          [](Tensor& t, std::optional<Tensor> g) { t.setGrad(g ? *g : Tensor()); })
      .def_property_readonly("grad_fn",
                             [](const Tensor& t) -> py::object {
                               if (!t.gradFn()) return py::none();
                               return py::cast(t.gradFn());
                             })
      .def("detach", &detach)
      .def("backward", &backward, py::arg("gradient") = py::none(), py::arg("retain_graph") = false)
      // ---- views ----
      .def("view",
           [](const Tensor& t, py::args args) {
             // x.view(-1) is the common call: an int is never a dtype, so skip the type check
             if (args.size() == 1 && !PyLong_Check(args[0].ptr()) && isDType(args[0]))
               throw NotSupported("Tensor.view(dtype)");
             return view(t, shapeFromArgs(args, "view"));
           })
      .def("reshape",
           [](const Tensor& t, py::args args) {
             return reshape(t, shapeFromArgs(args, "reshape", "shape"));
           })
      .def("view_as", [](const Tensor& t, const Tensor& o) { return view(t, o.sizes()); })
      .def("reshape_as", [](const Tensor& t, const Tensor& o) { return reshape(t, o.sizes()); })
      .def("permute",
           [](const Tensor& t, py::args args) {
             return permute(t, shapeFromArgs(args, "permute", "dims", "ints"));
           })
      .def("transpose", &transpose)
      .def("t", &tMatrix)
      .def_property_readonly("T",
                             [](const Tensor& t) {
                               std::vector<int64_t> dims(static_cast<size_t>(t.dim()));
                               for (int64_t d = 0; d < t.dim(); ++d) dims[d] = t.dim() - 1 - d;
                               return permute(t, dims);
                             })
      .def_property_readonly("mT",
                             [](const Tensor& t) {
                               if (t.dim() < 2)
                                 throw std::invalid_argument(
                                     "tensor.mT is only supported on matrices or batches of "
                                     "matrices. Got " +
                                     std::to_string(t.dim()) + "-D tensor.");
                               return mT(t);
                             })
      .def("expand",
           [](const Tensor& t, py::args args) { return expand(t, shapeFromArgs(args, "expand")); })
      .def("expand_as", [](const Tensor& t, const Tensor& o) { return expand(t, o.sizes()); })
      .def("unsqueeze", &unsqueeze)
      .def(
          "squeeze",
          [](const Tensor& t, std::optional<int64_t> dim) {
            return dim ? squeeze(t, *dim) : squeeze(t);
          },
          py::arg("dim") = py::none())
      .def("flatten", &flatten, py::arg("start_dim") = 0, py::arg("end_dim") = -1)
      .def("contiguous", &contiguous)
      .def("clone", [](const Tensor& t) { return clone(t); })
      .def("narrow", &narrow)
      .def("select", &select)
      .def("split", py::overload_cast<const Tensor&, int64_t, int64_t>(&split),
           py::arg("split_size"), py::arg("dim") = 0)
      .def("split", &splitWithSizes, py::arg("split_size"), py::arg("dim") = 0)
      .def("chunk", py::overload_cast<const Tensor&, int64_t, int64_t>(&chunk), py::arg("chunks"),
           py::arg("dim") = 0)
      .def(
          "diagonal",
          [](const Tensor& t, int64_t offset, int64_t d1, int64_t d2) {
            if (offset != 0) throw NotSupported("Tensor.diagonal(offset != 0)");
            return diagonal(t, d1, d2);
          },
          py::arg("offset") = 0, py::arg("dim1") = 0, py::arg("dim2") = 1)
      // ---- device and dtype ----
      .def("_to", &toDeviceAndDType, py::arg("device"), py::arg("dtype"), py::arg("copy") = false)
      // ---- values ----
      .def("item", &itemOf)
      .def("tolist", &toList)
      .def("numpy", &toNumpy);

  m.def("_flatten", &flatten);
  m.def("_broadcast_shapes", &broadcastShapes);
  m.def("_split", py::overload_cast<const Tensor&, int64_t, int64_t>(&split));
  m.def("_chunk", py::overload_cast<const Tensor&, int64_t, int64_t>(&chunk));
}

}  // namespace matmulviz::python
