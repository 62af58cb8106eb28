#pragma once
// The host computation of the memory-efficient attention kernel (core/ops/attention.h): one
// (batch, head) at a time, a query row at a time, in float64 work buffers of the CPU backend
// (never device memory: the kernel keeps its tiles on chip). Internal to core/ops.

#include "core/tensor/tensor.h"

#include <array>
#include <utility>

namespace matmulviz::detail {

/// One attention problem: q [B, H, L, E], k [B, H, S, E], v [B, H, S, Ev] (any strides, one
/// floating dtype), bias undefined or [B, H, L, S] (any strides, q's dtype), the causal flag
/// (query i sees keys j <= i) and the scale of q @ k^T.
struct AttentionProblem {
  Tensor q, k, v, bias;
  bool causal = false;
  double scale = 1.0;
};

/// Writes out [B, H, L, Ev] (any strides) and, when defined, lse [B, H, >= L] float32: per query
/// row, the log of the sum of exp(scores). A row whose keys are all masked gets out 0 and lse
/// +inf (the backward then gives it no gradient).
void attentionForwardHost(const AttentionProblem& p, const Tensor& out, const Tensor& lse);

/// The efficient kernel's backward: delta [B, H, L] float32 = rowsum(dOut * out) (written), the
/// attention recomputed from q, k and lse, then dq, dk, dv (shapes of q, k, v, any strides)
/// written: dV = P^T dO, dS = P * (dO V^T - delta), dQ = scale * dS K, dK = scale * dS^T Q.
void attentionBackwardHost(const AttentionProblem& p, const Tensor& out, const Tensor& lse,
                           const Tensor& dOut, const Tensor& delta, const Tensor& dq,
                           const Tensor& dk, const Tensor& dv);

}  // namespace matmulviz::detail

namespace matmulviz {
struct AttentionOptions;
}

namespace matmulviz::detail {

/// The fused CUDA kernel PyTorch 2.x's dispatch picks on an sm90 GPU (sdp_utils.cpp:
/// select_sdp_backend, flash first, then memory-efficient), with what differs between the two:
/// node and op names, the logsumexp's rows and the backward's float32 work buffers.
struct FusedKernel {
  bool flash = false;
  const char* node;        ///< "ScaledDotProductFlashAttentionBackward0", ...Efficient...
  const char* op;          ///< "aten._scaled_dot_product_flash_attention", ...efficient...
  const char* backwardOp;  ///< op + "_backward"
  /// Rows of the float32 logsumexp per (batch, head): L (flash), ceil(L / 32) * 32 (efficient).
  int64_t lseRows(int64_t l) const;
};

/// The flash (true) or memory-efficient (false) kernel's names, without any check.
FusedKernel fusedKernel(bool flash);

/// The kernel's forward on an already checked problem: counts sdpaFlops() under kernel.op,
/// allocates the output (attentionOutput's layout: efficient [B, L, H, Ev] memory, flash q's
/// layout when q is contiguous) and the float32 logsumexp [B, H, kernel.lseRows(L)] (flash
/// always; efficient only when computeLse, else [B, H, 0]), computes both; no autograd node.
std::pair<Tensor, Tensor> fusedAttentionForward(const FusedKernel& kernel,
                                                const AttentionProblem& p, bool computeLse);

/// The kernel's backward (derivatives.yaml: _scaled_dot_product_*_attention_backward): counts
/// sdpaBackwardFlops() under kernel.backwardOp; grad_out (and, flash, the output) copied to
/// contiguous [B, L, H, Ev] order when it is not, then grad_query, grad_key, grad_value of the
/// inputs' shapes and the float32 work buffers (freed on return); the attention is recomputed
/// from q, k and lse. Returns {dq, dk, dv}; no autograd node.
std::array<Tensor, 3> fusedAttentionBackward(const FusedKernel& kernel, const AttentionProblem& p,
                                             const Tensor& output, const Tensor& lse,
                                             const Tensor& gradOut);

/// validate_sdpa_input (attention.cpp) with PyTorch's messages, the matmulviz limits (4-d,
/// dropout 0, a mask without grad, host-computable memory), then the kernel PyTorch would run:
/// flash for float16/bfloat16 without a mask, with q, k, v of one head dim <= 256 that is a
/// multiple of 8 and no causal mask on L != S (check_flash_causal_non_square_seqlens); else
/// the efficient kernel for float32/float16/bfloat16 with E == key's E and E, Ev multiples of
/// 4 (float32) or 8 (minimum_gemm_alignment). Throws NotSupportedError where PyTorch would
/// fall back to the math formulation (float64, unaligned head dims), which is not modelled.
FusedKernel selectKernel(const Tensor& q, const Tensor& k, const Tensor& v,
                         const AttentionOptions& options);

/// The attention bias of the efficient path, or an undefined tensor without a mask: a bool mask
/// becomes where(mask, 0, -inf) in q's dtype (convert_boolean_attn_mask, a new tensor of the
/// mask's shape), an unaligned one a zero-padded copy (preprocess_mask), expanded to
/// [B, H, L, S].
Tensor attentionBias(const AttentionOptions& options, const Tensor& q, const Tensor& k);

}  // namespace matmulviz::detail
