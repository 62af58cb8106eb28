// Comparisons: torch.eq, ne, lt, le, gt, ge (and the Tensor operators matmulviz/torch wires to
// them), each taking a tensor or a Python number on the right; the bitwise ops of masks (~, &, |,
// ^); torch.nonzero. The results are outside the autograd graph. The op logic is
// core/ops/compare.cpp.
#include "core/ops/compare.h"
#include "core/ops/ops.h"
#include "python/src/bindings.h"
#include "python/src/errors.h"

#include <string>

namespace py = pybind11;

namespace matmulviz::python {

namespace {

/// a <op> other, other a Tensor or a Python bool, int or float (PyTorch's Scalar).
Tensor compareWith(CompareOp op, const Tensor& a, const py::object& other) {
  PyObject* o = other.ptr();
  if (isTensor(other.ptr())) return compare(op, a, tensorOf(o));
  if (PyBool_Check(o)) return compare(op, a, o == Py_True ? 1.0 : 0.0, ScalarKind::Bool);
  if (PyLong_Check(o))
    return compare(op, a, static_cast<double>(other.cast<int64_t>()), ScalarKind::Int);
  if (PyFloat_Check(o)) return compare(op, a, other.cast<double>(), ScalarKind::Float);
  const std::string name(compareOpName(op));
  throw py::type_error(name + "() received an invalid combination of arguments - got (Tensor, " +
                       std::string(py::str(py::type::of(other).attr("__name__"))) +
                       "), but expected one of:\n * (Tensor input, Tensor other)\n * (Tensor "
                       "input, Number other)");
}

/// a <op> other, other a Tensor or a Python bool or int.
Tensor bitwiseWith(BitwiseOp op, const Tensor& a, const py::object& other, const char* name) {
  PyObject* o = other.ptr();
  if (isTensor(other.ptr())) return bitwise(op, a, tensorOf(o));
  if (PyBool_Check(o)) return bitwise(op, a, o == Py_True ? 1 : 0, ScalarKind::Bool);
  if (PyLong_Check(o)) return bitwise(op, a, other.cast<int64_t>(), ScalarKind::Int);
  if (PyFloat_Check(o)) return bitwise(op, a, 0, ScalarKind::Float);  // throws PyTorch's error
  throw py::type_error(std::string(name) +
                       "() received an invalid combination of arguments - got (Tensor, " +
                       std::string(py::str(py::type::of(other).attr("__name__"))) +
                       "), but expected one of:\n * (Tensor input, Tensor other)\n * (Tensor "
                       "input, Number other)");
}

}  // namespace

void bindCompare(py::module_& m) {
  for (CompareOp op :
       {CompareOp::Eq, CompareOp::Ne, CompareOp::Lt, CompareOp::Le, CompareOp::Gt, CompareOp::Ge}) {
    const std::string name(compareOpName(op));
    m.def(
        name.c_str(),
        [op](const Tensor& a, const py::object& other) { return compareWith(op, a, other); },
        py::arg("input"), py::arg("other"));
  }
  m.def("bitwise_not", &bitwiseNot);
  m.def("bitwise_and", [](const Tensor& a, const py::object& b) {
    return bitwiseWith(BitwiseOp::And, a, b, "bitwise_and");
  });
  m.def("bitwise_or", [](const Tensor& a, const py::object& b) {
    return bitwiseWith(BitwiseOp::Or, a, b, "bitwise_or");
  });
  m.def("bitwise_xor", [](const Tensor& a, const py::object& b) {
    return bitwiseWith(BitwiseOp::Xor, a, b, "bitwise_xor");
  });
  m.def("nonzero", [](const Tensor& t) {
    if (!t.hasData())
      throw NotSupported(
          "torch.nonzero on the meta CUDA mode (the result's size depends on the "
          "values)");
    return nonzero(t);
  });
}

}  // namespace matmulviz::python
