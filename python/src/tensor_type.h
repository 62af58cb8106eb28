#pragma once
// The Python type matmulviz._C.Tensor: a plain CPython object holding a core Tensor (a handle
// to a TensorImpl) inline, as PyTorch's THPVariable holds its at::Tensor
// (torch/csrc/autograd/python_variable.h). It is not a pybind11 class: a pybind11 instance
// keeps its C++ value in a separate heap block and registers every instance in a process-wide
// hash table, which cost more than the op itself for small tensors in a Python loop. Methods
// are still pybind11 functions (TensorClass::def, as py::class_::def), and the type_caster
// below converts Tensor arguments and results of every binding.
//
// Include this header (bindings.h does) in every file that passes a Tensor to or from Python:
// the caster must be the same in all of them.

#include "core/tensor/tensor.h"

#include <pybind11/pybind11.h>

#include <utility>

namespace matmulviz::python {

/// The object's layout: the tensor handle, and the list of weak references to it (torch's
/// weakref.WeakValueDictionary of leaves holds tensors).
struct TensorObject {
  PyObject_HEAD Tensor value;
  PyObject* weakrefs;
};

/// The type, made once by makeTensorType (null before).
inline PyTypeObject* tensorTypeObject = nullptr;

/// Creates the type and adds it to `m` as "Tensor". Throws pybind11::error_already_set.
pybind11::object makeTensorType(pybind11::module_& m);

inline bool isTensor(PyObject* o) {
  return PyObject_TypeCheck(o, tensorTypeObject) != 0;
}
/// The tensor inside `o`, which must be a Tensor object (isTensor).
inline Tensor& tensorOf(PyObject* o) {
  return reinterpret_cast<TensorObject*>(o)->value;
}
/// A new Python Tensor holding `t` (a new reference). Throws pybind11::error_already_set when
/// Python is out of memory.
PyObject* wrapTensor(Tensor t);

/// Adds methods and properties to the Tensor type as pybind11::class_ does (the same function
/// records, signatures, overloads and argument conversions).
class TensorClass {
 public:
  explicit TensorClass(pybind11::object type) : type_(std::move(type)) {}
  pybind11::handle ptr() const { return type_; }

  template <typename Func, typename... Extra>
  TensorClass& def(const char* name, Func&& f, const Extra&... extra) {
    pybind11::cpp_function cf(pybind11::method_adaptor<Tensor>(std::forward<Func>(f)),
                              pybind11::name(name), pybind11::is_method(type_),
                              pybind11::sibling(pybind11::getattr(type_, name, pybind11::none())),
                              extra...);
    pybind11::detail::add_class_method(type_, name, cf);
    return *this;
  }
  template <typename Getter>
  TensorClass& def_property_readonly(const char* name, const Getter& fget) {
    return property(name, method(fget), pybind11::none());
  }
  template <typename Getter, typename Setter>
  TensorClass& def_property(const char* name, const Getter& fget, const Setter& fset) {
    return property(name, method(fget), method(fset));
  }

 private:
  template <typename Func>
  pybind11::cpp_function method(const Func& f) {
    return pybind11::cpp_function(pybind11::method_adaptor<Tensor>(f), pybind11::is_method(type_));
  }
  TensorClass& property(const char* name, const pybind11::object& fget,
                        const pybind11::object& fset);
  pybind11::object type_;
};

}  // namespace matmulviz::python

namespace pybind11::detail {

/// Tensor arguments are references to the tensor inside the Python object (no copy); a Tensor
/// result becomes a new Python object holding the handle (whatever the return value policy: a
/// Tensor is a shared handle, so a copy names the same tensor).
template <>
class type_caster<matmulviz::Tensor> {
 public:
  bool load(handle src, bool /*convert*/) {
    if (!src || !matmulviz::python::isTensor(src.ptr())) return false;
    value_ = &matmulviz::python::tensorOf(src.ptr());
    return true;
  }
  static handle cast(const matmulviz::Tensor& src, return_value_policy, handle) {
    return matmulviz::python::wrapTensor(src);
  }
  static handle cast(matmulviz::Tensor&& src, return_value_policy, handle) {
    return matmulviz::python::wrapTensor(std::move(src));
  }
  static handle cast(const matmulviz::Tensor* src, return_value_policy policy, handle parent) {
    if (!src) return none().release();
    return cast(*src, policy, parent);
  }

  static constexpr auto name = const_name("Tensor");
  template <typename T>
  using cast_op_type = detail::cast_op_type<T>;
  operator matmulviz::Tensor*() { return value_; }
  operator matmulviz::Tensor&() {
    if (!value_) throw reference_cast_error();
    return *value_;
  }

 private:
  matmulviz::Tensor* value_ = nullptr;
};

}  // namespace pybind11::detail
