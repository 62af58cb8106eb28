#include "python/src/tensor_type.h"

#include <structmember.h>

#include <cstddef>
#include <new>

namespace py = pybind11;

namespace matmulviz::python {

namespace {

void dealloc(PyObject* self) {
  py::error_scope keep;  // the tensor's destructor may run Python code (allocation observers)
  auto* object = reinterpret_cast<TensorObject*>(self);
  if (object->weakrefs) PyObject_ClearWeakRefs(self);
  object->value.~Tensor();
  PyTypeObject* type = Py_TYPE(self);
  type->tp_free(self);
  Py_DECREF(type);  // a heap type's instances hold a reference to it
}

PyMemberDef members[] = {
    {"__weaklistoffset__", T_PYSSIZET, offsetof(TensorObject, weakrefs), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr}};

PyType_Slot slots[] = {
    {Py_tp_dealloc, reinterpret_cast<void*>(&dealloc)}, {Py_tp_members, members}, {0, nullptr}};

// Tensors come from ops, never from Tensor() (as pybind11's class without a constructor).
PyType_Spec spec = {"matmulviz._C.Tensor", sizeof(TensorObject), 0,
                    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION, slots};

}  // namespace

py::object makeTensorType(py::module_& m) {
  PyObject* type = PyType_FromSpec(&spec);
  if (!type) throw py::error_already_set();
  tensorTypeObject = reinterpret_cast<PyTypeObject*>(type);
  // Python's own errors name a type by tp_name ("unsupported operand type(s) for +: 'Tensor'
  // and 'str'"); PyTorch's is "Tensor". __name__, __qualname__ and __module__
  // ("matmulviz._C") are kept apart from it, so only those messages change.
  tensorTypeObject->tp_name = "Tensor";
  py::object result = py::reinterpret_steal<py::object>(type);
  m.add_object("Tensor", result);
  return result;
}

PyObject* wrapTensor(Tensor t) {
  PyObject* o = tensorTypeObject->tp_alloc(tensorTypeObject, 0);
  if (!o) throw py::error_already_set();
  new (&reinterpret_cast<TensorObject*>(o)->value) Tensor(std::move(t));
  return o;
}

TensorClass& TensorClass::property(const char* name, const py::object& fget,
                                   const py::object& fset) {
  type_.attr(name) = py::reinterpret_borrow<py::object>(
      reinterpret_cast<PyObject*>(&PyProperty_Type))(fget, fset, py::none(), py::str(""));
  return *this;
}

}  // namespace matmulviz::python
