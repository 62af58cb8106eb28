// Creation and math functions: torch.empty/zeros/..., matmul/mm/bmm/einsum/cat, arithmetic.
// Argument forms (sizes as *args, dtype=, device=) are handled by matmulviz/torch; these take
// them normalised.
#include "core/autograd/grad_mode.h"
#include "core/ops/attention.h"
#include "core/ops/einsum.h"
#include "core/ops/ops.h"
#include "core/ops/pointwise.h"
#include "python/src/bindings.h"
#include "python/src/convert.h"
#include "python/src/errors.h"
#include "python/src/runtime.h"

#include <pybind11/stl.h>

#include <optional>

namespace py = pybind11;

namespace matmulviz::python {

namespace {

DevicePtr deviceOf(const std::string& name) {
  return Runtime::instance().parseDevice(name);
}

/// torch.full's value written into a fresh tensor (no data on meta).
Tensor filled(const Shape& sizes, double value, DType dtype, const std::string& device,
              const char* op) {
  const DevicePtr d = deviceOf(device);
  OpScope scope(d.get(), op);
  Tensor t = empty(sizes, dtype, d, op);
  if (t.hasData() && t.numel() > 0) {
    NoGradGuard noGrad;
    copyInto(t, expand(fromDoubles({}, {value}, dtype), sizes));
  }
  return t;
}

/// A tensor from host values (torch.tensor, from_numpy, torch.rand via NumPy) moved to `device`.
Tensor hostTo(const Tensor& host, const std::string& device, const char* op) {
  const DevicePtr d = deviceOf(device);
  if (!d) return host;
  OpScope scope(d.get(), op);
  return toDevice(host, d, op);
}

/// A Python number as c10::Scalar: int and bool are integral (int64 tensors stay int64).
Scalar toScalar(py::handle h) {
  if (PyBool_Check(h.ptr()) || PyLong_Check(h.ptr())) return {h.cast<double>(), true};
  if (PyFloat_Check(h.ptr())) return {h.cast<double>(), false};
  throw py::type_error("expected a Python number (int, float or bool), got " +
                       std::string(py::str(py::type::handle_of(h).attr("__name__"))));
}

/// torch.return_types.topk: a named tuple (values, indices).
py::object topkResult(const Tensor& values, const Tensor& indices) {
  static py::object type = py::module_::import("collections")
                               .attr("namedtuple")("topk", py::make_tuple("values", "indices"));
  return type(values, indices);
}

Tensor scalarLike(double v, const Tensor& like) {
  return fromDoubles({}, {v}, like.dtype());
}

}  // namespace

void bindOps(py::module_& m) {
  m.def(
      "empty",
      [](const Shape& sizes, DType dtype, const std::string& device) {
        const DevicePtr d = deviceOf(device);
        OpScope scope(d.get(), "empty");
        return empty(sizes, dtype, d, "empty");
      },
      py::arg("sizes"), py::arg("dtype"), py::arg("device"));
  m.def(
      "full",
      [](const Shape& sizes, double value, DType dtype, const std::string& device) {
        return filled(sizes, value, dtype, device, "full");
      },
      py::arg("sizes"), py::arg("value"), py::arg("dtype"), py::arg("device"));
  m.def("from_numpy", &fromNumpy);
  m.def("_host_to", &hostTo);
  m.def("matmul", &matmul);
  m.def("mm", &mm);
  m.def("bmm", &bmm);
  m.def("cat", &cat, py::arg("tensors"), py::arg("dim") = 0);
  m.def("einsum", [](const std::string& eq, const std::vector<Tensor>& operands) {
    return einsum(eq, operands);
  });
  m.def("gather_bmm", &gatherBmm);
  m.def(
      "scaled_dot_product_attention",
      [](const Tensor& q, const Tensor& k, const Tensor& v, std::optional<Tensor> mask,
         double dropoutP, bool isCausal, std::optional<double> scale) {
        return scaledDotProductAttention(q, k, v, {std::move(mask), dropoutP, isCausal, scale});
      },
      py::arg("query"), py::arg("key"), py::arg("value"), py::arg("attn_mask"),
      py::arg("dropout_p"), py::arg("is_causal"), py::arg("scale"));
  m.def("add", [](const Tensor& a, const Tensor& b) { return add(a, b); });
  m.def("mul", [](const Tensor& a, const Tensor& b) { return mul(a, b); });
  m.def("sub", [](const Tensor& a, const Tensor& b) { return sub(a, b); });
  m.def("div", [](const Tensor& a, const Tensor& b) { return div(a, b); });
  m.def("add_scalar", [](const Tensor& t, py::handle s) { return addScalar(t, toScalar(s)); });
  m.def("sub_scalar", [](const Tensor& t, py::handle s) { return subScalar(t, toScalar(s)); });
  m.def("rsub_scalar", [](const Tensor& t, py::handle s) { return rsubScalar(t, toScalar(s)); });
  m.def("mul_scalar", [](const Tensor& t, py::handle s) { return mulScalar(t, toScalar(s)); });
  m.def("div_scalar", [](const Tensor& t, py::handle s) { return divScalar(t, toScalar(s)); });
  m.def("rdiv_scalar", [](const Tensor& t, py::handle s) { return rdivScalar(t, toScalar(s)); });
  m.def("neg", [](const Tensor& t) { return neg(t); });
  m.def("cos", [](const Tensor& t) { return cos(t); });
  m.def("sin", [](const Tensor& t) { return sin(t); });
  m.def("exp", [](const Tensor& t) { return exp(t); });
  m.def("relu", [](const Tensor& t) { return relu(t); });
  m.def("softmax", [](const Tensor& t, int64_t dim) { return softmax(t, dim); });
  m.def("topk", [](const Tensor& t, int64_t k, int64_t dim, bool largest, bool sorted) {
    auto [values, indices] = topk(t, k, dim, largest, sorted);
    return topkResult(values, indices);
  });
  m.def("mean", [](const Tensor& t) { return mean(t); });
  m.def("mean_dims", &meanDims);
  m.def("stack", &stack, py::arg("tensors"), py::arg("dim") = 0);
  m.def("_scalar_like", &scalarLike);
  m.def("sum", [](const Tensor& t) { return sum(t); });
  m.def("sum_dims", &sumDims);
  m.def("clone", [](const Tensor& t) { return clone(t); });
  m.def("contiguous", &contiguous);
}

}  // namespace matmulviz::python
