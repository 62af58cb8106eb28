// scaled_dot_product_attention's kernel choice on the modelled GPU (core/ops/sdpa_choice.h), for
// the PyTorch adapter, which runs the chosen kernel's op as PyTorch's composite does.
#include "core/memory/pytorch_model.h"
#include "core/ops/sdpa_choice.h"
#include "python/src/bindings.h"
#include "python/src/runtime.h"

#include <pybind11/stl.h>

#include <string>
#include <vector>

namespace py = pybind11;

namespace matmulviz::python {

namespace {

/// A tensor as the adapter describes it: {"dtype", "sizes", "strides", "storage_offset",
/// "element_size", "requires_grad"}.
SdpaTensor sdpaTensor(const py::dict& d) {
  SdpaTensor t;
  t.dtype = d["dtype"].cast<std::string>();
  t.sizes = d["sizes"].cast<std::vector<int64_t>>();
  t.strides = d["strides"].cast<std::vector<int64_t>>();
  t.storageOffset = d["storage_offset"].cast<int64_t>();
  t.elementBytes = d["element_size"].cast<int64_t>();
  t.requiresGrad = d["requires_grad"].cast<bool>();
  return t;
}

}  // namespace

void bindSdpa(py::module_& m) {
  m.def(
      "sdpa_backend",
      [](const py::dict& q, const py::dict& k, const py::dict& v, const py::object& mask,
         double dropoutP, bool isCausal, bool enableGqa, bool gradEnabled,
         const py::dict& settings) {
        SdpaCall call{sdpaTensor(q), sdpaTensor(k), sdpaTensor(v), std::nullopt,
                      dropoutP,      isCausal,      enableGqa,     gradEnabled};
        if (!mask.is_none()) call.attnMask = sdpaTensor(mask.cast<py::dict>());
        SdpaSettings s;
        s.flash = settings["flash"].cast<bool>();
        s.memEfficient = settings["mem_efficient"].cast<bool>();
        s.math = settings["math"].cast<bool>();
        s.cudnn = settings["cudnn"].cast<bool>();
        s.deterministic = settings["deterministic"].cast<bool>();
        s.deterministicWarnOnly = settings["deterministic_warn_only"].cast<bool>();
        for (int b : settings["priority"].cast<std::vector<int>>())
          s.priority.push_back(static_cast<SdpaBackend>(b));
        s.cudnnVersion = settings["cudnn_version"].cast<long>();
        s.cudnnDeprioritized = settings["cudnn_deprioritized"].cast<bool>();
        const GpuArchitecture& a = Runtime::instance().pytorchModel().architecture();
        const SdpaChoice c =
            selectSdpaBackend(call, a.computeCapability / 10, a.computeCapability % 10, s);
        return py::make_tuple(static_cast<int>(c.backend), sdpaBackendName(c.backend), c.skipped);
      },
      py::arg("query"), py::arg("key"), py::arg("value"), py::arg("attn_mask"),
      py::arg("dropout_p"), py::arg("is_causal"), py::arg("enable_gqa"), py::arg("grad_enabled"),
      py::arg("settings"),
      "select_sdp_backend (cuda/sdp_utils.cpp) on the modelled GPU: (at::SDPBackend value, its "
      "name, why each backend tried before it was not taken)");
}

}  // namespace matmulviz::python
