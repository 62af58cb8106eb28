// scaled_dot_product_attention on the fused CUDA kernel PyTorch 2.x picks (attention_select.cpp):
// the kernels' allocations (cuda/attention.cu: _efficient_attention_forward and
// _flash_attention_forward; cuda/attention_backward.cu; flash_attn/flash_api.cpp: mha_fwd,
// mha_bwd), their FLOP formulas (torch/utils/flop_counter.py: sdpa_flop_count,
// sdpa_backward_flop_count) and their autograd nodes (tools/autograd/derivatives.yaml).
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

int64_t roundUp(int64_t n, int64_t m) {
  return (n + m - 1) / m * m;
}

/// The fused kernel's node (tools/autograd/derivatives.yaml:
/// _scaled_dot_product_efficient_attention and _scaled_dot_product_flash_attention): saves query,
/// key, value, the output, the float32 logsumexp, the efficient kernel's attn_bias, and the philox
/// seed and offset (0-dim int64 host tensors without dropout); the flash kernel's
/// cum_seq_q/cum_seq_k are undefined (dense inputs).
class FusedAttentionBackward final : public Node {
 public:
  FusedAttentionBackward(const detail::FusedKernel& kernel, const detail::AttentionProblem& p,
                         const Tensor& out, const Tensor& lse)
      : kernel_(kernel), causal_(p.causal), scale_(p.scale) {
    const std::string node = name();
    query_ = SavedTensor(p.q, savedWhy("query", node, p.q));
    key_ = SavedTensor(p.k, savedWhy("key", node, p.k));
    value_ = SavedTensor(p.v, savedWhy("value", node, p.v));
    if (p.bias.defined()) bias_ = SavedTensor(p.bias, savedWhy("attn_bias", node, p.q));
    output_ = SavedTensor(detail::savedOutput(out), savedWhy("output", node, p.q));
    output_.setProducer(node);
    lse_ = SavedTensor(lse, savedWhy(lseName(), node, p.q));
    lse_.setProducer(node, 1);
    seed_ = zeros({}, DType::Int64, nullptr, "philox_seed");
    offset_ = zeros({}, DType::Int64, nullptr, "philox_offset");
  }
  std::string name() const override { return kernel_.node; }
  TensorList apply(TensorList&& grads) override;
  void releaseSaved() override {
    for (SavedTensor* s : {&query_, &key_, &value_, &bias_, &output_, &lse_}) s->reset();
    seed_ = offset_ = Tensor();
  }
  std::vector<std::pair<std::string, Tensor>> savedTensors() const override {
    std::vector<std::pair<std::string, Tensor>> saved = {
        {"query", query_.get()}, {"key", key_.get()}, {"value", value_.get()}};
    if (kernel_.flash)
      saved.insert(saved.end(), {{"output", output_.get()},
                                 {"logsumexp", lse_.get()},
                                 {"cum_seq_q", Tensor()},
                                 {"cum_seq_k", Tensor()}});
    else
      saved.insert(
          saved.end(),
          {{"attn_bias", bias_.get()}, {"output", output_.get()}, {"log_sumexp", lse_.get()}});
    saved.insert(saved.end(), {{"philox_seed", seed_}, {"philox_offset", offset_}});
    return saved;
  }

 private:
  const char* lseName() const { return kernel_.flash ? "logsumexp" : "log_sumexp"; }

  detail::FusedKernel kernel_;
  SavedTensor query_, key_, value_, bias_, output_, lse_;
  Tensor seed_, offset_;
  bool causal_;
  double scale_;
};

/// The backward's float32 work buffers, alive while it runs: the efficient kernel's delta
/// [B, H, L] (attention_backward.cu); flash's softmax_d [B, H, L128] and dq_accum
/// [B, L128, H, E32] with L128 = L rounded up to 128, E32 = E rounded up to 32 (256 above
/// 192) (flash_api.cpp: mha_bwd).
std::vector<Tensor> workBuffers(const detail::FusedKernel& kernel,
                                const detail::AttentionProblem& p) {
  const int64_t B = p.q.size(0), H = p.q.size(1), L = p.q.size(2), E = p.q.size(3);
  const DevicePtr& device = p.q.storage().devicePtr();
  if (!kernel.flash) return {empty({B, H, L}, DType::Float32, device, "delta")};
  const int64_t l128 = roundUp(L, 128), e32 = E <= 192 ? roundUp(E, 32) : 256;
  return {empty({B, H, l128}, DType::Float32, device, "softmax_d"),
          empty({B, l128, H, e32}, DType::Float32, device, "dq_accum")};
}

/// t [B, H, L, X] as the kernels read it: t.transpose(1, 2).contiguous(), transposed back. A new
/// [B, L, H, X] tensor labelled `label` unless t's memory is already in that order.
Tensor blhContiguous(const Tensor& t, const char* label) {
  NoGradGuard noGrad;
  const Tensor tt = transpose(t, 1, 2);
  if (tt.isContiguous()) return t;
  const Tensor c = empty(tt.sizes(), t.dtype(), t.storage().devicePtr(), label);
  if (c.hasData() && t.hasData()) copyInto(c, tt);
  return transpose(c, 1, 2);
}

/// The kernel's output: flash writes empty_like(q) in its [B, L, H, E] view (so q's layout),
/// the efficient kernel a new [B, L, H, Ev] tensor; both return the [B, H, L, Ev] view.
Tensor attentionOutput(const detail::FusedKernel& kernel, const Tensor& q, int64_t ev) {
  const int64_t B = q.size(0), H = q.size(1), L = q.size(2);
  const DevicePtr& device = q.storage().devicePtr();
  if (kernel.flash && q.isContiguous())
    return empty({B, H, L, ev}, q.dtype(), device, "scaled_dot_product_attention output");
  const Tensor res = empty({B, L, H, ev}, q.dtype(), device, "scaled_dot_product_attention output");
  return makeView(res, {B, H, L, ev}, {L * H * ev, ev, H * ev, 1}, 0);
}

TensorList FusedAttentionBackward::apply(TensorList&& grads) {
  if (!grads[0].defined()) return TensorList(3);
  const detail::AttentionProblem p{query_.get(), key_.get(), value_.get(),
                                   bias_.get(),  causal_,    scale_};
  auto [dq, dk, dv] =
      detail::fusedAttentionBackward(kernel_, p, output_.get(), lse_.get(), grads[0]);
  return {dq, dk, dv};
}

}  // namespace

namespace detail {

std::pair<Tensor, Tensor> fusedAttentionForward(const FusedKernel& kernel,
                                                const AttentionProblem& p, bool computeLse) {
  const Tensor &q = p.q, &k = p.k, &v = p.v;
  const int64_t B = q.size(0), H = q.size(1), L = q.size(2);
  countFlops(kernel.op, sdpaFlops(B, H, L, k.size(2), q.size(3), v.size(3)));
  Tensor out = attentionOutput(kernel, q, v.size(3));
  // flash always writes its logsumexp; the efficient kernel only when asked
  const int64_t lseRows = computeLse || kernel.flash ? kernel.lseRows(L) : 0;
  Tensor lse = empty({B, H, lseRows}, DType::Float32, q.storage().devicePtr(), "logsumexp");
  if (out.hasData() && q.hasData() && k.hasData() && v.hasData() && out.numel() > 0) {
    NoGradGuard noGrad;
    attentionForwardHost(p, out, lseRows > 0 ? lse : Tensor());
  }
  return {out, lse};
}

std::array<Tensor, 3> fusedAttentionBackward(const FusedKernel& kernel, const AttentionProblem& p,
                                             const Tensor& output, const Tensor& lse,
                                             const Tensor& gradOut) {
  OpScope op(gradOut.device(), std::string(kernel.backwardOp).substr(5));
  countFlops(kernel.backwardOp, sdpaBackwardFlops(p.q.size(0), p.q.size(1), p.q.size(2),
                                                  p.k.size(2), p.q.size(3), p.v.size(3)));
  const Tensor dOut = blhContiguous(gradOut, "grad_out contiguous");
  const Tensor out = kernel.flash ? blhContiguous(output, "out contiguous") : output;
  const DevicePtr& device = p.q.storage().devicePtr();
  Tensor dq = empty(p.q.sizes(), p.q.dtype(), device, "grad_query");
  Tensor dk = empty(p.k.sizes(), p.k.dtype(), device, "grad_key");
  Tensor dv = empty(p.v.sizes(), p.v.dtype(), device, "grad_value");
  const std::vector<Tensor> work = workBuffers(kernel, p);
  if (dq.hasData() && dOut.hasData() && p.q.hasData() && dq.numel() + dv.numel() > 0) {
    NoGradGuard noGrad;
    // work[0] receives the kernel's delta = rowsum(dO * O) (efficient: delta; flash: softmax_d)
    attentionBackwardHost(p, out, lse, dOut, work[0], dq, dk, dv);
  }
  return {dq, dk, dv};
}

}  // namespace detail

Tensor scaledDotProductAttention(const Tensor& q, const Tensor& k, const Tensor& v,
                                 const AttentionOptions& options) {
  const detail::FusedKernel kernel = detail::selectKernel(q, k, v, options);
  OpScope op(q.device(), "scaled_dot_product_attention");
  const double scale = options.scale.value_or(1.0 / std::sqrt(static_cast<double>(q.size(3))));
  const detail::AttentionProblem p{
      q, k, v, detail::attentionBias(options, q, k), options.isCausal, scale};
  const bool needGrad = anyRequiresGrad({&q, &k, &v});  // should_compute_logsumexp
  auto [out, lse] = detail::fusedAttentionForward(kernel, p, needGrad);
  if (needGrad) {
    auto node = std::make_shared<FusedAttentionBackward>(kernel, p, out, lse);
    node->nextEdges = {gradientEdge(q), gradientEdge(k), gradientEdge(v)};
    setHistory(out, node);
  }
  return out;
}

}  // namespace matmulviz
