#pragma once
// torch.nn.functional.scaled_dot_product_attention as PyTorch 2.x runs it on an sm90 CUDA GPU
// (aten/src/ATen/native/transformers/attention.cpp: scaled_dot_product_attention;
// cuda/sdp_utils.cpp: select_sdp_backend): the flash kernel for float16/bfloat16 without a mask
// (_scaled_dot_product_flash_attention), else the memory-efficient one
// (_scaled_dot_product_efficient_attention); where PyTorch would fall back to the math
// formulation (float64, unaligned head dims) matmulviz refuses.
//
// Values are the math formulation's (attention.cpp: _scaled_dot_product_attention_math):
// softmax(q @ k^T * scale + bias) @ v. Memory is the fused kernel's: the L x S attention matrix
// never exists in device memory (the host computes it a row at a time in work buffers, as the
// kernel does in tiles); the autograd node (ScaledDotProductFlashAttentionBackward0 or
// ScaledDotProductEfficientAttentionBackward0) saves query, key, value, the output, a float32
// logsumexp and (efficient) the attention bias, and its backward recomputes the attention from
// q, k and the logsumexp.

#include "core/tensor/tensor.h"

#include <array>
#include <cstdint>
#include <optional>

namespace matmulviz {

/// The optional arguments of scaled_dot_product_attention, with PyTorch's defaults.
struct AttentionOptions {
  /// Broadcastable to [batch, heads, L, S]: bool (false masks out: -inf) or float (added to the
  /// scores; its dtype must be the query's, as the efficient kernel requires).
  std::optional<Tensor> attnMask;
  /// Must be 0: matmulviz has no random number generator matching PyTorch's Philox.
  double dropoutP = 0.0;
  /// A lower-triangular (top-left aligned) mask: query i sees keys j <= i. Not with attnMask.
  bool isCausal = false;
  /// The factor of q @ k^T; default 1 / sqrt(E) (sdp_utils: calculate_scale).
  std::optional<double> scale;
};

/// The alignment of the efficient kernel's logsumexp rows (cuda/mem_eff_attention: kAlignLSE):
/// the logsumexp of a [batch, heads, L] problem is [batch, heads, ceil(L / 32) * 32] float32.
constexpr int64_t kAttentionLseAlign = 32;

/// out = softmax(q @ k^T * scale + mask) @ v for q [batch, heads, L, E], k [batch, heads, S, E],
/// v [batch, heads, S, Ev] of one floating dtype on one device; out [batch, heads, L, Ev] in that
/// dtype. Device memory, as PyTorch's fused paths allocate it, in order: for the efficient
/// kernel, a bool mask becomes a float mask of q's dtype and the mask's shape
/// (convert_boolean_attn_mask) and a mask whose strides are not multiples of 8 a zero-padded
/// copy (preprocess_mask: pad_bias); then the output (efficient: [batch, L, heads, Ev] memory,
/// returned transposed; flash: q's layout) and the float32 logsumexp: flash [batch, heads, L]
/// always, efficient [batch, heads, ceil(L / 32) * 32] when grad is needed
/// (should_compute_logsumexp). The backward copies grad_out (and, flash, the output) to
/// contiguous [batch, L, heads, Ev] order when it is not, then allocates grad_query, grad_key,
/// grad_value and its float32 work buffers (efficient: delta [batch, heads, L]; flash:
/// softmax_d and dq_accum); the copies and buffers are freed when it returns. A query row whose
/// keys are all masked gives 0 (the math path's _safe_softmax). FLOPs: sdpaFlops() under
/// "aten._scaled_dot_product_<flash|efficient>_ attention", sdpaBackwardFlops() under the same name
/// + "_backward". Throws std::invalid_argument with PyTorch's messages for dtype or device
/// mismatches, fewer than 2 dims, a bad mask dtype, a mask with is_causal; NotSupportedError for
/// ranks other than 4, dropout_p != 0, a mask that requires grad, the math fallback's cases, and a
/// device with its own compute backend.
Tensor scaledDotProductAttention(const Tensor& q, const Tensor& k, const Tensor& v,
                                 const AttentionOptions& options = {});

/// What aten._scaled_dot_product_efficient_attention returns (output, log_sumexp, philox_seed,
/// philox_offset) and the tensors of aten._scaled_dot_product_flash_attention's nine outputs
/// (output, logsumexp, cum_seq_q, cum_seq_k, max_q, max_k, philox_seed, philox_offset,
/// debug_attn_mask) that are defined for dense inputs without dropout.
struct FusedAttentionOutputs {
  Tensor output;     ///< [batch, heads, L, Ev], the layout scaledDotProductAttention() returns
  Tensor logsumexp;  ///< float32 [batch, heads, rows]: flash L; efficient ceil(L / 32) * 32, 0
                     ///< without compute_log_sumexp
  Tensor philoxSeed, philoxOffset;  ///< 0-dim int64 host tensors (no dropout: unused)
};

/// The fused op scaled_dot_product_attention dispatches to, called directly, as AOTAutograd's
/// joint graph records it (aten/src/ATen/native/native_functions.yaml):
/// flash == false: _scaled_dot_product_efficient_attention(query, key, value, attn_bias=None,
/// compute_log_sumexp, dropout_p=0, is_causal, scale); flash == true:
/// _scaled_dot_product_flash_attention(query, key, value, dropout_p=0, is_causal,
/// return_debug_mask=False, scale). Shapes, values, memory and FLOPs as
/// scaledDotProductAttention() without a mask, but no autograd node: the caller runs the
/// backward op itself. Throws std::invalid_argument when PyTorch would run the other kernel
/// for these inputs, and scaledDotProductAttention()'s errors.
FusedAttentionOutputs scaledDotProductFusedAttention(bool flash, const Tensor& q, const Tensor& k,
                                                     const Tensor& v, bool computeLogSumExp,
                                                     bool isCausal, std::optional<double> scale);

/// Whether scaledDotProductAttention(q, k, v, options) runs the flash kernel (true) or the
/// memory-efficient one (false), as PyTorch 2.x's select_sdp_backend picks on an sm90 GPU
/// (attention.h, top). Throws scaledDotProductAttention()'s argument errors.
bool sdpaUsesFlash(const Tensor& q, const Tensor& k, const Tensor& v,
                   const AttentionOptions& options);

/// _scaled_dot_product_efficient_attention_backward (flash == false) or
/// _scaled_dot_product_flash_attention_backward (flash == true) without mask and dropout
/// (tools/autograd/derivatives.yaml): {grad_query, grad_key, grad_value} of q, k, v's shapes
/// from grad_out [batch, heads, L, Ev] and the forward's output and logsumexp; the attention is
/// recomputed, the kernels' copies and float32 work buffers live while it runs (as the fused
/// node's backward, above). Throws std::invalid_argument for shapes that do not match the
/// forward's (grad_out not the output's shape, a logsumexp with fewer than L rows).
std::array<Tensor, 3> scaledDotProductFusedAttentionBackward(bool flash, const Tensor& gradOut,
                                                             const Tensor& q, const Tensor& k,
                                                             const Tensor& v, const Tensor& out,
                                                             const Tensor& logsumexp, bool isCausal,
                                                             std::optional<double> scale);

/// Forward FLOPs as torch/utils/flop_counter.py's sdpa_flop_count: the two bmm's
/// [b*h, L, E] @ [b*h, E, S] and [b*h, L, S] @ [b*h, S, Ev], 2 * b * h * L * S * (E + Ev).
/// Causal masking is not discounted (PyTorch's "NB: We aren't accounting for causal attention").
int64_t sdpaFlops(int64_t b, int64_t h, int64_t l, int64_t s, int64_t e, int64_t ev);
/// Backward FLOPs as sdpa_backward_flop_count: the recomputed scores, dP = dO @ v^T,
/// dV = P^T @ dO, dQ = dS @ k and dK = dS^T @ q: 2 * b * h * L * S * (3 * E + 2 * Ev).
int64_t sdpaBackwardFlops(int64_t b, int64_t h, int64_t l, int64_t s, int64_t e, int64_t ev);

}  // namespace matmulviz
