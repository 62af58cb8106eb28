#include "python/src/convert.h"

#include "core/ops/ops.h"

#include <cstring>
#include <string>

namespace py = pybind11;

namespace matmulviz::python {

namespace {

std::string typeName(py::handle o) {
  return py::str(py::type::of(o).attr("__name__"));
}

/// Python ints and objects with __index__ other than floats and bools (NumPy ints, 0-dim integer
/// tensors), as PyTorch's parser takes them for a size.
bool isIndex(py::handle o) {
  if (PyBool_Check(o.ptr()) || PyFloat_Check(o.ptr())) return false;
  return PyIndex_Check(o.ptr()) != 0;
}

Shape sizesOf(py::handle sequence, const char* function, const char* argument, const char* kind) {
  Shape out;
  int64_t pos = 0;
  for (py::handle item : sequence.cast<py::sequence>()) {
    ++pos;
    if (!isIndex(item))
      throw py::type_error(std::string(function) + "(): argument '" + argument +
                           "' must be tuple of " + kind + ", but found element of type " +
                           typeName(item) + " at pos " + std::to_string(pos));
    out.push_back(py::int_(py::reinterpret_borrow<py::object>(item)).cast<int64_t>());
  }
  return out;
}

}  // namespace

Shape shapeFromSequence(py::handle sequence, const char* function, const char* argument,
                        const char* kind) {
  if (isIndex(sequence))
    return {py::int_(py::reinterpret_borrow<py::object>(sequence)).cast<int64_t>()};
  if (!py::isinstance<py::sequence>(sequence) || py::isinstance<py::str>(sequence)) {
    // view has two signatures (sizes, dtype): PyTorch's parser then lists them.
    if (std::string(function) == "view")
      throw py::type_error(std::string(function) +
                           "() received an invalid combination of arguments - got (" +
                           typeName(sequence) +
                           "), but expected one of:\n * (torch.dtype dtype)\n * (tuple of "
                           "SymInts size)");
    throw py::type_error(std::string(function) + "(): argument '" + argument + "' (position 1) " +
                         "must be tuple of " + kind + ", not " + typeName(sequence));
  }
  return sizesOf(sequence, function, argument, kind);
}

Shape shapeFromArgs(const py::args& args, const char* function, const char* argument,
                    const char* kind) {
  if (args.size() == 1) return shapeFromSequence(args[0], function, argument, kind);
  return sizesOf(args, function, argument, kind);
}

py::tuple toTuple(const Shape& sizes) {
  py::tuple t(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) t[i] = py::int_(sizes[i]);
  return t;
}

namespace {

DType dtypeOfArray(const py::array& a) {
  const py::dtype d = a.dtype();
  if (d.is(py::dtype::of<float>())) return DType::Float32;
  if (d.is(py::dtype::of<double>())) return DType::Float64;
  if (d.is(py::dtype::of<int64_t>())) return DType::Int64;
  const char kind = d.kind();
  if (kind == 'f' && d.itemsize() == 4) return DType::Float32;
  if (kind == 'f' && d.itemsize() == 8) return DType::Float64;
  if (kind == 'f' && d.itemsize() == 2) return DType::Float16;
  if (kind == 'i' && d.itemsize() == 8) return DType::Int64;
  if (kind == 'b' && d.itemsize() == 1) return DType::Bool;
  throw py::type_error(
      "can't convert np.ndarray of type " +
      py::str(static_cast<py::handle>(d)).cast<std::string>() +
      ". matmulviz supports float64, float32, float16, int64 and bool (PyTorch also supports "
      "int32, int16, int8 and uint8; convert with array.astype first)");
}

}  // namespace

Tensor fromNumpy(const py::array& array) {
  const DType dtype = dtypeOfArray(array);
  const py::array c = py::array::ensure(array, py::array::c_style);
  Shape sizes(c.shape(), c.shape() + c.ndim());
  Tensor t = empty(sizes, dtype, nullptr, "from_numpy");
  if (t.nbytes() > 0) std::memcpy(t.dataPtr(), c.data(), static_cast<size_t>(t.nbytes()));
  return t;
}

py::array toNumpy(const Tensor& t) {
  if (t.device() != nullptr)
    throw py::type_error(
        "can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor "
        "to host memory first.");
  if (t.requiresGrad())
    throw std::logic_error(
        "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.");
  py::dtype dt;
  switch (t.dtype()) {
    case DType::Float32:
      dt = py::dtype::of<float>();
      break;
    case DType::Float64:
      dt = py::dtype::of<double>();
      break;
    case DType::Int64:
      dt = py::dtype::of<int64_t>();
      break;
    case DType::Float16:
      dt = py::dtype("float16");
      break;
    case DType::Bool:
      dt = py::dtype::of<bool>();
      break;
    default:
      throw py::type_error("Got unsupported ScalarType " + std::string(dtypeName(t.dtype())));
  }
  const Tensor c = contiguous(t);
  std::vector<py::ssize_t> shape(c.sizes().begin(), c.sizes().end());
  py::array out(dt, shape);
  if (c.nbytes() > 0) std::memcpy(out.mutable_data(), c.dataPtr(), static_cast<size_t>(c.nbytes()));
  return out;
}

}  // namespace matmulviz::python
