// The ops a compiled joint graph runs one by one (docs/compile.md): the fused attention ops
// scaled_dot_product_attention dispatches to, with PyTorch's names, argument lists and tuple
// results (native_functions.yaml); amax and fma, which softmax's decompositions use.
#include "core/ops/attention.h"
#include "core/ops/pointwise.h"
#include "python/src/bindings.h"

#include <pybind11/stl.h>

#include <optional>
#include <stdexcept>
#include <vector>

namespace py = pybind11;

namespace matmulviz::python {

namespace {

/// matmulviz models neither an attention bias in compiled graphs nor dropout.
void checkPlain(const char* op, bool hasBias, double dropoutP) {
  if (hasBias)
    throw NotSupportedError(std::string(op) + " with an attn_bias is not supported by matmulviz");
  if (dropoutP != 0.0)
    throw NotSupportedError(std::string(op) +
                            " with dropout_p != 0 is not supported by matmulviz (no Philox "
                            "generator)");
}

py::tuple efficientForward(const Tensor& q, const Tensor& k, const Tensor& v,
                           const std::optional<Tensor>& bias, bool computeLse, double dropoutP,
                           bool isCausal, std::optional<double> scale) {
  checkPlain("_scaled_dot_product_efficient_attention", bias.has_value(), dropoutP);
  FusedAttentionOutputs r =
      scaledDotProductFusedAttention(false, q, k, v, computeLse, isCausal, scale);
  return py::make_tuple(r.output, r.logsumexp, r.philoxSeed, r.philoxOffset);
}

py::tuple efficientBackward(const Tensor& gradOut, const Tensor& q, const Tensor& k,
                            const Tensor& v, const std::optional<Tensor>& bias, const Tensor& out,
                            const Tensor& lse, const py::object& /*seed*/,
                            const py::object& /*offset*/, double dropoutP,
                            const std::vector<bool>& /*gradInputMask*/, bool isCausal,
                            std::optional<double> scale) {
  checkPlain("_scaled_dot_product_efficient_attention_backward", bias.has_value(), dropoutP);
  auto [dq, dk, dv] =
      scaledDotProductFusedAttentionBackward(false, gradOut, q, k, v, out, lse, isCausal, scale);
  return py::make_tuple(dq, dk, dv, py::none());
}

py::tuple flashForward(const Tensor& q, const Tensor& k, const Tensor& v, double dropoutP,
                       bool isCausal, bool returnDebugMask, std::optional<double> scale) {
  checkPlain("_scaled_dot_product_flash_attention", false, dropoutP);
  if (returnDebugMask)
    throw NotSupportedError(
        "_scaled_dot_product_flash_attention(return_debug_mask=True) is not supported");
  FusedAttentionOutputs r = scaledDotProductFusedAttention(true, q, k, v, true, isCausal, scale);
  // cum_seq_q/k undefined (dense inputs), max_q/max_k the sequence lengths, debug_attn_mask
  // unused (None here; PyTorch returns an empty tensor)
  return py::make_tuple(r.output, r.logsumexp, py::none(), py::none(), q.size(2), k.size(2),
                        r.philoxSeed, r.philoxOffset, py::none());
}

py::tuple flashBackward(const Tensor& gradOut, const Tensor& q, const Tensor& k, const Tensor& v,
                        const Tensor& out, const Tensor& lse, const py::object& /*cumSeqQ*/,
                        const py::object& /*cumSeqK*/, int64_t /*maxQ*/, int64_t /*maxK*/,
                        double dropoutP, bool isCausal, const py::object& /*seed*/,
                        const py::object& /*offset*/, std::optional<double> scale) {
  checkPlain("_scaled_dot_product_flash_attention_backward", false, dropoutP);
  auto [dq, dk, dv] =
      scaledDotProductFusedAttentionBackward(true, gradOut, q, k, v, out, lse, isCausal, scale);
  return py::make_tuple(dq, dk, dv);
}

}  // namespace

void bindFusedOps(py::module_& m) {
  m.def(
      "_sdpa_uses_flash",
      [](const Tensor& q, const Tensor& k, const Tensor& v, std::optional<Tensor> mask,
         double dropoutP, bool isCausal, std::optional<double> scale) {
        return sdpaUsesFlash(q, k, v, {std::move(mask), dropoutP, isCausal, scale});
      },
      py::arg("query"), py::arg("key"), py::arg("value"), py::arg("attn_mask"),
      py::arg("dropout_p"), py::arg("is_causal"), py::arg("scale"),
      "True when scaled_dot_product_attention runs the flash kernel, False for the efficient one");
  m.def("_scaled_dot_product_efficient_attention", &efficientForward, py::arg("query"),
        py::arg("key"), py::arg("value"), py::arg("attn_bias"), py::arg("compute_log_sumexp"),
        py::arg("dropout_p") = 0.0, py::arg("is_causal") = false, py::kw_only(),
        py::arg("scale") = py::none(),
        "aten._scaled_dot_product_efficient_attention: (output, log_sumexp, philox_seed, "
        "philox_offset)");
  m.def("_scaled_dot_product_efficient_attention_backward", &efficientBackward, py::arg("grad_out"),
        py::arg("query"), py::arg("key"), py::arg("value"), py::arg("attn_bias"), py::arg("out"),
        py::arg("logsumexp"), py::arg("philox_seed"), py::arg("philox_offset"),
        py::arg("dropout_p"), py::arg("grad_input_mask"), py::arg("is_causal") = false,
        py::kw_only(), py::arg("scale") = py::none(), "(grad_query, grad_key, grad_value, None)");
  m.def("_scaled_dot_product_flash_attention", &flashForward, py::arg("query"), py::arg("key"),
        py::arg("value"), py::arg("dropout_p") = 0.0, py::arg("is_causal") = false,
        py::arg("return_debug_mask") = false, py::kw_only(), py::arg("scale") = py::none(),
        "aten._scaled_dot_product_flash_attention: its nine outputs");
  m.def("_scaled_dot_product_flash_attention_backward", &flashBackward, py::arg("grad_out"),
        py::arg("query"), py::arg("key"), py::arg("value"), py::arg("out"), py::arg("logsumexp"),
        py::arg("cum_seq_q"), py::arg("cum_seq_k"), py::arg("max_q"), py::arg("max_k"),
        py::arg("dropout_p"), py::arg("is_causal"), py::arg("philox_seed"),
        py::arg("philox_offset"), py::kw_only(), py::arg("scale") = py::none(),
        "(grad_query, grad_key, grad_value)");
  m.def("amax", &amax, py::arg("input"), py::arg("dim"), py::arg("keepdim"),
        "aten.amax over one dim (no autograd node)");
  m.def("fma", &fma, py::arg("a"), py::arg("b"), py::arg("c"),
        "prims.fma: a * b + c in one tensor (no autograd node)");
}

}  // namespace matmulviz::python
