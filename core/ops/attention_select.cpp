// scaled_dot_product_attention's argument checks (attention.cpp: validate_sdpa_input), the
// kernel choice of PyTorch 2.x's CUDA dispatch (cuda/sdp_utils.cpp: select_sdp_backend,
// use_flash_attention, use_mem_efficient_attention) and the efficient path's mask preparation
// (attention.cpp: convert_boolean_attn_mask, preprocess_mask).
#include "core/autograd/grad_mode.h"
#include "core/ops/attention.h"
#include "core/ops/attention_kernel.h"
#include "core/ops/ops.h"
#include "core/ops/pointwise_kernels.h"

#include <limits>
#include <stdexcept>
#include <string>

namespace matmulviz::detail {

int64_t FusedKernel::lseRows(int64_t l) const {
  return flash ? l : (l + kAttentionLseAlign - 1) / kAttentionLseAlign * kAttentionLseAlign;
}

FusedKernel fusedKernel(bool flash) {
  if (flash)
    return {true, "ScaledDotProductFlashAttentionBackward0",
            "aten._scaled_dot_product_flash_attention",
            "aten._scaled_dot_product_flash_attention_backward"};
  return {false, "ScaledDotProductEfficientAttentionBackward0",
          "aten._scaled_dot_product_efficient_attention",
          "aten._scaled_dot_product_efficient_attention_backward"};
}

namespace {

/// c10's TypeMeta names, as PyTorch's messages print a tensor's dtype().
std::string typeMetaName(DType t) {
  switch (t) {
    case DType::Float32:
      return "float";
    case DType::Float64:
      return "double";
    case DType::Float16:
      return "c10::Half";
    case DType::BFloat16:
      return "c10::BFloat16";
    case DType::Int64:
      return "long int";
    case DType::Bool:
      return "bool";
  }
  return "unknown";
}

/// validate_sdpa_input (attention.cpp), PyTorch's messages word for word.
void validateInput(const Tensor& q, const Tensor& k, const Tensor& v,
                   const std::optional<Tensor>& mask) {
  if (q.dtype() != k.dtype() || q.dtype() != v.dtype())
    throw std::invalid_argument(
        "Expected query, key, and value to have the same dtype, but got query.dtype: " +
        typeMetaName(q.dtype()) + " key.dtype: " + typeMetaName(k.dtype()) +
        " and value.dtype: " + typeMetaName(v.dtype()) + " instead.");
  if (q.device() != k.device() || q.device() != v.device())
    throw std::invalid_argument(
        "Expected query, key, and value to have the same device type, but got query, key and "
        "value on different devices instead.");
  if (q.dim() < 2 || k.dim() < 2 || v.dim() < 2)
    throw std::invalid_argument(
        "Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: " +
        std::to_string(q.dim()) + " key.dim: " + std::to_string(k.dim()) +
        " and value.dim: " + std::to_string(v.dim()) + " instead.");
  if (mask) {
    const DType m = mask->dtype();
    if (m != DType::Bool && m != DType::Float32 && m != q.dtype())
      throw std::invalid_argument(
          "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
          "attn_mask.dtype: " +
          typeMetaName(m) + " and  query.dtype: " + typeMetaName(q.dtype()) + " instead.");
  }
}

/// What matmulviz's efficient path needs beyond PyTorch's common checks.
void checkSupported(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& o) {
  if (o.isCausal && o.attnMask)  // attention.cpp: _scaled_dot_product_attention_math
    throw std::invalid_argument(
        "_scaled_dot_product_attention: Explicit attn_mask should not be set when "
        "is_causal=True");
  if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4)
    throw NotSupportedError(
        "scaled_dot_product_attention with query.dim: " + std::to_string(q.dim()) +
        " key.dim: " + std::to_string(k.dim()) + " and value.dim: " + std::to_string(v.dim()) +
        ": matmulviz runs the fused kernels' 4-d layout only ([batch, heads, L, E])");
  if (o.dropoutP != 0.0)
    throw NotSupportedError(
        "scaled_dot_product_attention with dropout_p=" + std::to_string(o.dropoutP) +
        ": matmulviz has no random number generator matching PyTorch's "
        "(Philox); use dropout_p=0.0");
  const bool same = k.size(0) == q.size(0) && v.size(0) == q.size(0) && k.size(1) == q.size(1) &&
                    v.size(1) == q.size(1) && v.size(2) == k.size(2);
  if (!same)  // the fused kernels' TORCH_CHECKs (attention.cu), with the shapes said
    throw std::invalid_argument(
        "scaled_dot_product_attention: expected key [batch, heads, S, E] and value [batch, "
        "heads, S, Ev] with the batch and heads of query [batch, heads, L, E], got query " +
        q.shapeString() + ", key " + k.shapeString() + " and value " + v.shapeString());
  if (o.attnMask && o.attnMask->requiresGrad() && GradMode::isEnabled())
    throw NotSupportedError("scaled_dot_product_attention with an attn_mask that requires grad");
  requireHostCompute(q, "scaled_dot_product_attention");
}

/// Where PyTorch's dispatch would take the math formulation instead of a fused kernel.
[[noreturn]] void mathFallback(const std::string& why) {
  throw NotSupportedError("scaled_dot_product_attention " + why +
                          ": PyTorch's CUDA dispatch runs the math formulation there "
                          "(sdp_utils.cpp), whose memory matmulviz does not model");
}

/// use_flash_attention's checks that matter here (sm90, dense 4-d inputs).
bool flashEligible(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& o) {
  const DType t = q.dtype();
  const int64_t e = q.size(3);
  return (t == DType::Float16 || t == DType::BFloat16) && !o.attnMask && k.size(3) == e &&
         v.size(3) == e && e > 0 && e <= 256 && e % 8 == 0 &&
         !(o.isCausal && q.size(2) != k.size(2));
}

/// convert_boolean_attn_mask: where(mask.logical_not(), -inf, 0) in q's dtype, mask's shape.
Tensor boolMaskToBias(const Tensor& mask, const Tensor& q) {
  Tensor bias = empty(mask.sizes(), q.dtype(), q.storage().devicePtr(), "attn_mask as float");
  if (!bias.hasData() || !mask.hasData()) return bias;
  NoGradGuard noGrad;
  const Tensor m = hostReadable(mask, "attn_mask on the host");
  const double inf = std::numeric_limits<double>::infinity();
  void* pb = bias.dataPtr();
  const void* pm = m.dataPtr();
  forEachRun(bias.sizes(), bias.strides(), m.strides(),
             [&](int64_t ob, int64_t om, int64_t n, int64_t sb, int64_t sm) {
               for (int64_t i = 0; i < n; ++i)
                 storeFromDouble(pb, bias.dtype(), ob + i * sb,
                                 loadAsDouble(pm, DType::Bool, om + i * sm) != 0 ? 0.0 : -inf);
             });
  return bias;
}

/// preprocess_mask: a mask whose strides are not multiples of 8 elements (or whose last stride
/// is not 1) is padded with zeros to a last dim of size + (8 - size % 8), then sliced back
/// (pad_bias); the result is expanded to [B, H, L, S].
Tensor preprocessBias(const Tensor& bias, const Tensor& q, const Tensor& k) {
  constexpr int64_t align = 8;
  bool aligned = bias.dim() == 0 || bias.stride(bias.dim() - 1) == 1;
  for (int64_t i = 0; i + 1 < bias.dim(); ++i) aligned = aligned && bias.stride(i) % align == 0;
  NoGradGuard noGrad;
  Tensor b = bias;
  if (!aligned && bias.dim() > 0) {
    Shape padded = bias.sizes();
    padded.back() += align - padded.back() % align;
    Tensor p = zeros(padded, bias.dtype(), q.storage().devicePtr(), "attn_mask padded");
    const int64_t last = bias.dim() - 1;
    if (p.hasData() && bias.hasData()) copyInto(slice(p, last, 0, bias.size(last)), bias);
    b = slice(p, last, 0, bias.size(last));
  }
  return expand(b, {q.size(0), q.size(1), q.size(2), k.size(2)});
}

}  // namespace

FusedKernel selectKernel(const Tensor& q, const Tensor& k, const Tensor& v,
                         const AttentionOptions& options) {
  validateInput(q, k, v, options.attnMask);
  checkSupported(q, k, v, options);
  if (flashEligible(q, k, v, options)) return fusedKernel(true);
  const DType t = q.dtype();
  if (t != DType::Float32 && t != DType::Float16 && t != DType::BFloat16)
    mathFallback("with " + typeMetaName(t) + " inputs");
  const int64_t e = q.size(3);
  if (t != DType::Float32 && !options.attnMask && k.size(3) == e && v.size(3) == e && e > 0 &&
      e < 256 && e % 8 != 0 && !(options.isCausal && q.size(2) != k.size(2)))
    throw NotSupportedError("scaled_dot_product_attention with a head dim of " + std::to_string(e) +
                            " in 16 bits: PyTorch's flash path pads it to a multiple of 8 "
                            "(attention.cpp: pad_last_dim), which matmulviz does not model");
  const int64_t align = t == DType::Float32 ? 4 : 8;  // minimum_gemm_alignment on sm80+
  if (k.size(3) != q.size(3) || q.size(3) % align != 0 || v.size(3) % align != 0 ||
      q.size(3) == 0 || v.size(3) == 0)
    mathFallback("with query.size(-1) " + std::to_string(q.size(3)) + ", key.size(-1) " +
                 std::to_string(k.size(3)) + " and value.size(-1) " + std::to_string(v.size(3)) +
                 " (the efficient kernel needs equal query and key "
                 "head dims, multiples of " +
                 std::to_string(align) + ")");
  if (options.attnMask && options.attnMask->dtype() != DType::Bool &&
      options.attnMask->dtype() != t)
    throw std::invalid_argument(  // _efficient_attention_forward's check on the bias
        "invalid dtype for bias - should match query's dtype");
  return fusedKernel(false);
}

Tensor attentionBias(const AttentionOptions& options, const Tensor& q, const Tensor& k) {
  if (!options.attnMask) return Tensor();
  const Tensor& m = *options.attnMask;
  return preprocessBias(m.dtype() == DType::Bool ? boolMaskToBias(m, q) : m, q, k);
}

}  // namespace matmulviz::detail
