// Creation and math functions: torch.empty/zeros/..., matmul/mm/bmm/einsum/cat, arithmetic.
// Argument forms (sizes as *args, dtype=, device=) are handled by matmulviz/torch; these take
// them normalised.
#include "core/autograd/grad_mode.h"
#include "core/ops/einsum.h"
#include "core/ops/ops.h"
#include "python/src/bindings.h"
#include "python/src/convert.h"
#include "python/src/errors.h"
#include "python/src/runtime.h"

#include <pybind11/stl.h>

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
  m.def("add", [](const Tensor& a, const Tensor& b) { return add(a, b); });
  m.def("mul", [](const Tensor& a, const Tensor& b) { return mul(a, b); });
  m.def("_scalar_like", &scalarLike);
  m.def("sum", [](const Tensor& t) { return sum(t); });
  m.def("sum_dims", &sumDims);
  m.def("clone", [](const Tensor& t) { return clone(t); });
  m.def("contiguous", &contiguous);
}

}  // namespace matmulviz::python
