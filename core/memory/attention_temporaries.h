#pragma once
// The buffers scaled-dot-product attention's CUDA kernels take from the caching allocator for the
// length of one op, beside their outputs (core/memory/kernel_temporaries.h's steps).

#include "core/memory/kernel_temporaries.h"
#include "core/memory/pytorch_model.h"

#include <cstdint>
#include <vector>

namespace matmulviz {

/// The shapes of an attention call: query [batch, heads, lq, dqk], key [.., lk, dqk], value
/// [.., lk, dv].
struct AttentionShape {
  int64_t batch = 0, heads = 0, lq = 0, lk = 0, dqk = 0, dv = 0;
};

/// _scaled_dot_product_efficient_attention_backward on an sm_80+ GPU
/// (aten/src/ATen/native/transformers/cuda/attention_backward.cu, _efficient_attention_backward;
/// mem_eff_attention/kernel_backward.h, workspace_size), in order:
/// - grad_out.contiguous() ([batch, lq, heads, dv] in q's dtype) when grad_out, read as
///   [batch, lq, heads, dv], is not contiguous (`gradOutContiguous`); freed as the op returns;
/// - the outputs grad_query, grad_key, grad_value (kOutputsStep);
/// - delta, [batch, heads, lq] float32: for 16-bit inputs the kernel computes it into an empty
///   tensor; for float32 it is (grad_out * out).sum(-1).transpose(-2, -1).contiguous(), so the
///   product ([batch, lq, heads, dv] float32) and the sum ([batch, lq, heads]) come first and are
///   freed (the sum first) before the kernel;
/// - the workspace (uint8), batch x heads x align4(gQ + gK + gV) floats: gQ = ceil(lq / I) x
///   ceil(dqk / J) x (I x J + 4) (GradQTempStorage: a lock, a counter and padding, then the
///   tile); gK, gV = splits x J x alignup(d, I) for 16-bit inputs with dv above 128 only
///   (kNeedsAccumGradK/V); splits = ceil(lk / J), 1 when batch x heads >= 256 and lk <= 2J, at
///   most 200 / (batch x heads) when gK/gV are needed. Tile (I, J) of cutlassB's sm_80 kernels:
///   16-bit: dqk <= 64: 64 x 64, <= 128: 128 x 128, else 128 x 64; float32: dqk <= 64: 64 x 64,
///   else 128 x 64;
/// - delta freed after the kernel, then the workspace and the copy as the op returns.
/// Measured on an H200 (float32, [16, 4, 128, 64]: 2 MiB copy, the 2 MiB product, 32 KiB sum and
/// delta, a 2099200-byte workspace; tests/reference/gpu/snapshots/transformer_adamw_3_steps).
/// The 16-bit sizes follow the sources and are not measured.
std::vector<TemporaryStep> efficientAttentionBackwardTemporaries(const AttentionShape& shape,
                                                                 int64_t elementBytes,
                                                                 bool gradOutContiguous);

}  // namespace matmulviz
