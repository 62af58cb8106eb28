#pragma once
// The host computation of the memory-efficient attention kernel (core/ops/attention.h): one
// (batch, head) at a time, a query row at a time, in float64 work buffers of the CPU backend
// (never device memory: the kernel keeps its tiles on chip). Internal to core/ops.

#include "core/tensor/tensor.h"

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
