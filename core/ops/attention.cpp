// scaled_dot_product_attention: PyTorch's argument checks (attention.cpp: validate_sdpa_input),
// the mask preparation of its efficient path (convert_boolean_attn_mask, preprocess_mask), the
// efficient kernel's allocations (cuda/attention.cu: _efficient_attention_forward; the backward
// in cuda/attention_backward.cu) and its autograd node (tools/autograd/derivatives.yaml:
// _scaled_dot_product_efficient_attention).
#include "core/ops/attention.h"

#include "core/autograd/grad_mode.h"
#include "core/autograd/node.h"
#include "core/ops/attention_kernel.h"
#include "core/ops/flop_counter.h"
#include "core/ops/ops.h"
#include "core/ops/pointwise_kernels.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace matmulviz {

int64_t sdpaFlops(int64_t b, int64_t h, int64_t l, int64_t s, int64_t e, int64_t ev) {
  return bmmFlops(b * h, l, e, s) + bmmFlops(b * h, l, s, ev);
}

int64_t sdpaBackwardFlops(int64_t b, int64_t h, int64_t l, int64_t s, int64_t e, int64_t ev) {
  return bmmFlops(b * h, l, e, s)     // scores recomputed: q @ k^T
         + bmmFlops(b * h, l, ev, s)  // dP = dO @ v^T
         + bmmFlops(b * h, s, l, ev)  // dV = P^T @ dO
         + bmmFlops(b * h, l, s, e)   // dQ = dS @ k
         + bmmFlops(b * h, e, l, s);  // dK = (q^T @ dS)^T
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
  if (!isFloating(q.dtype()))
    throw std::invalid_argument(
        "scaled_dot_product_attention: expected a floating point "
        "query, key and value, got " +
        typeMetaName(q.dtype()));
  const bool same = k.size(0) == q.size(0) && v.size(0) == q.size(0) && k.size(1) == q.size(1) &&
                    v.size(1) == q.size(1) && k.size(3) == q.size(3) && v.size(2) == k.size(2);
  if (!same)  // the efficient kernel's TORCH_CHECKs (attention.cu), with the shapes said
    throw std::invalid_argument(
        "scaled_dot_product_attention: expected key [batch, heads, S, E] and value [batch, "
        "heads, S, Ev] matching query [batch, heads, L, E], got query " +
        q.shapeString() + ", key " + k.shapeString() + " and value " + v.shapeString());
  if (o.attnMask && o.attnMask->requiresGrad() && GradMode::isEnabled())
    throw NotSupportedError("scaled_dot_product_attention with an attn_mask that requires grad");
  if (o.attnMask && o.attnMask->dtype() != DType::Bool && o.attnMask->dtype() != q.dtype())
    throw std::invalid_argument(  // _efficient_attention_forward's check on the bias
        "invalid dtype for bias - should match query's dtype");
  detail::requireHostCompute(q, "scaled_dot_product_attention");
}

/// convert_boolean_attn_mask: where(mask.logical_not(), -inf, 0) in q's dtype, mask's shape.
Tensor boolMaskToBias(const Tensor& mask, const Tensor& q) {
  Tensor bias = empty(mask.sizes(), q.dtype(), q.storage().devicePtr(), "attn_mask as float");
  if (!bias.hasData() || !mask.hasData()) return bias;
  NoGradGuard noGrad;
  const Tensor m = hostReadable(mask, "attn_mask on the host");
  const Tensor mc = m.isContiguous() ? m : clone(m, MemoryFormat::Contiguous);
  const auto* pm = mc.data<bool>();
  const double inf = std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < bias.numel(); ++i)
    storeFromDouble(bias.dataPtr(), bias.dtype(), i, pm[i] ? 0.0 : -inf);
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

class EfficientAttentionBackward final : public Node {
 public:
  EfficientAttentionBackward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& bias,
                             const Tensor& out, const Tensor& lse, bool causal, double scale)
      : causal_(causal), scale_(scale) {
    const std::string node = name();
    query_ = SavedTensor(q, savedWhy("query", node, q));
    key_ = SavedTensor(k, savedWhy("key", node, k));
    value_ = SavedTensor(v, savedWhy("value", node, v));
    if (bias.defined()) bias_ = SavedTensor(bias, savedWhy("attn_bias", node, q));
    output_ = SavedTensor(detail::savedOutput(out), savedWhy("output", node, q));
    output_.setProducer(node);
    lse_ = SavedTensor(lse, savedWhy("log_sumexp", node, q));
    lse_.setProducer(node, 1);
    // philox_seed and philox_offset: 0-dim int64 host tensors without dropout (attention.cu).
    seed_ = zeros({}, DType::Int64, nullptr, "philox_seed");
    offset_ = zeros({}, DType::Int64, nullptr, "philox_offset");
  }
  std::string name() const override { return "ScaledDotProductEfficientAttentionBackward0"; }
  TensorList apply(TensorList&& grads) override;
  void releaseSaved() override {
    for (SavedTensor* s : {&query_, &key_, &value_, &bias_, &output_, &lse_}) s->reset();
    seed_ = offset_ = Tensor();
  }
  std::vector<std::pair<std::string, Tensor>> savedTensors() const override {
    return {{"query", query_.get()},    {"key", key_.get()},       {"value", value_.get()},
            {"attn_bias", bias_.get()}, {"output", output_.get()}, {"log_sumexp", lse_.get()},
            {"philox_seed", seed_},     {"philox_offset", offset_}};
  }

 private:
  SavedTensor query_, key_, value_, bias_, output_, lse_;
  Tensor seed_, offset_;
  bool causal_;
  double scale_;
};

/// _efficient_attention_backward: grad_q, grad_k, grad_v of the inputs' shapes, then the
/// float32 delta [B, H, L] that lives while the kernel runs. Returns the three gradients.
TensorList EfficientAttentionBackward::apply(TensorList&& grads) {
  const Tensor& dOut = grads[0];
  if (!dOut.defined()) return TensorList(3);
  const detail::AttentionProblem p{query_.get(), key_.get(), value_.get(),
                                   bias_.get(),  causal_,    scale_};
  OpScope op(dOut.device(), "_scaled_dot_product_efficient_attention_backward");
  const int64_t B = p.q.size(0), H = p.q.size(1), L = p.q.size(2), S = p.k.size(2);
  countFlops("aten._scaled_dot_product_efficient_attention_backward",
             sdpaBackwardFlops(B, H, L, S, p.q.size(3), p.v.size(3)));
  const DevicePtr& device = p.q.storage().devicePtr();
  Tensor dq = empty(p.q.sizes(), p.q.dtype(), device, "grad_query");
  Tensor dk = empty(p.k.sizes(), p.k.dtype(), device, "grad_key");
  Tensor dv = empty(p.v.sizes(), p.v.dtype(), device, "grad_value");
  {
    const Tensor delta = empty({B, H, L}, DType::Float32, device, "delta");
    if (dq.hasData() && dOut.hasData() && p.q.hasData() && dq.numel() + dv.numel() > 0) {
      detail::requireHostCompute(dq, "_scaled_dot_product_efficient_attention_backward");
      NoGradGuard noGrad;
      detail::attentionBackwardHost(p, output_.get(), lse_.get(), dOut, delta, dq, dk, dv);
    }
  }
  return {dq, dk, dv};
}

}  // namespace

Tensor scaledDotProductAttention(const Tensor& q, const Tensor& k, const Tensor& v,
                                 const AttentionOptions& options) {
  validateInput(q, k, v, options.attnMask);
  checkSupported(q, k, v, options);
  OpScope op(q.device(), "scaled_dot_product_attention");
  const int64_t B = q.size(0), H = q.size(1), L = q.size(2), S = k.size(2), Ev = v.size(3);
  const double scale = options.scale.value_or(1.0 / std::sqrt(static_cast<double>(q.size(3))));
  Tensor bias;
  if (options.attnMask) {
    const Tensor& m = *options.attnMask;
    bias = preprocessBias(m.dtype() == DType::Bool ? boolMaskToBias(m, q) : m, q, k);
  }
  const bool needGrad = anyRequiresGrad({&q, &k, &v});  // should_compute_logsumexp
  countFlops("aten._scaled_dot_product_efficient_attention", sdpaFlops(B, H, L, S, q.size(3), Ev));
  const DevicePtr& device = q.storage().devicePtr();
  // res [B, L, H, Ev], returned as res.transpose(1, 2); logsumexp padded to kAlignLSE rows.
  const Tensor res = empty({B, L, H, Ev}, q.dtype(), device, "scaled_dot_product_attention output");
  Tensor out = makeView(res, {B, H, L, Ev}, {L * H * Ev, Ev, H * Ev, 1}, 0);
  const int64_t lseRows =
      needGrad ? (L + kAttentionLseAlign - 1) / kAttentionLseAlign * kAttentionLseAlign : 0;
  Tensor lse = empty({B, H, lseRows}, DType::Float32, device, "logsumexp");
  if (out.hasData() && q.hasData() && k.hasData() && v.hasData() && out.numel() > 0) {
    NoGradGuard noGrad;
    detail::attentionForwardHost({q, k, v, bias, options.isCausal, scale}, out,
                                 needGrad ? lse : Tensor());
  }
  if (needGrad) {
    auto node = std::make_shared<EfficientAttentionBackward>(q, k, v, bias, out, lse,
                                                             options.isCausal, scale);
    node->nextEdges = {gradientEdge(q), gradientEdge(k), gradientEdge(v)};
    setHistory(out, node);
  }
  return out;
}

}  // namespace matmulviz
