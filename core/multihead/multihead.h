#pragma once
// The multi-head matmul assignment: multi-head matmul and matmul over "important" tokens, with
// their gradients, written against the engine's ops so that the memory model sees every view and
// copy.
//
// Shapes: b batch, s sequence, h hidden, e embed, nh heads, hd = h / nh head dim,
// t the number of important tokens. All tensors row-major; any strides accepted.

#include "core/tensor/tensor.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace matmulviz {

/// O2 = matmul_with_multi_head(A1, W1, num_heads) (the multi-head assignment, task 1).
/// A1: [b, s, h]; W1: [h, e]; h % num_heads == 0. Returns O2 [b, s, nh, e] with
/// O2[i, j, n, :] = A1[i, j, n*hd:(n+1)*hd] @ W1[n*hd:(n+1)*hd, :].
/// How: A1.view(b, s, nh, hd).permute(2, 0, 1, 3).reshape(nh, b*s, hd) (a view: the heads are
/// column blocks, read with leading dimension h), W1.view(nh, hd, e), ONE bmm -> [nh, b*s, e],
/// then .view(nh, b, s, e).permute(1, 2, 0, 3). No copy besides bmm's output: O2 is a
/// non-contiguous view of it (as `x.transpose(...)` is in PyTorch). Differentiable.
/// dtypes float32/float16/bfloat16/float64 (both the same; accumulation in float32 for the
/// 16-bit types). Throws std::invalid_argument naming the argument ("A1", "W1", "num_heads")
/// for wrong ranks, mismatched h, dtypes or devices, or num_heads < 1 or not dividing h.
Tensor matmulWithMultiHead(const Tensor& A1, const Tensor& W1, int64_t numHeads);

/// Which tokens are important (the multi-head assignment, task 2): P[i, j] >= top_p AND P[i, j] is
/// among the top_k of row i (top_k none = s). P: [b, s], any floating dtype. Returns mask [b * s]
/// (1 = important), row-major.
/// - `P >= top_p` compares in P's dtype, as PyTorch does for a tensor and a Python float
///   (aten/src/ATen/native/BinaryOps.cpp, type promotion: the scalar is cast to P's dtype), so
///   with float16 P, top_p = 0.1 is compared as float16(0.1).
/// - top_k ranks by value, descending, NaN as the largest (as torch.topk and torch.sort do);
///   ties at the top_k boundary: the lower sequence index wins (torch.topk promises no order;
///   this is torch.sort(P, descending=True, stable=True)[:, :k]). NaN is never important.
/// Throws std::invalid_argument naming "P", "top_p" (outside [0, 1] or NaN) or "top_k"
/// (outside [1, s]).
std::vector<uint8_t> importanceMask(const Tensor& P, double topP, std::optional<int64_t> topK);

struct ImportanceResult {
  Tensor O3;   ///< [t, nh, e], no autograd history
  Tensor dA1;  ///< [b, s, h], zeros at unimportant tokens; undefined without grad_output
  Tensor dW1;  ///< [h, e]; undefined without grad_output
  std::vector<uint8_t> mask;            ///< [b * s], 1 = important
  std::vector<int64_t> selectedTokens;  ///< flat indices i * s + j of A3's rows, ascending
};

/// matmul_with_importance(A1, P, W1, num_heads, top_p, top_k, grad_output) (the multi-head
/// assignment, tasks 2 and 3). A1: [b, s, h]; P: [b, s]; W1: [h, e]; grad_output: [t, nh, e] or
/// undefined. A3 = A1[mask] ([t, h], batch-major then sequence order, what boolean-mask indexing
/// gives; built as A1.view(b*s, h)[index] with a host int64 index, so the index is copied to the
/// device for the gather), O3 = A3's multi-head product [t, nh, e] (one bmm, see
/// matmulWithMultiHead). t = 0 works (O3 [0, nh, e], dA1 all zeros, dW1 zeros).
/// Without grad_output: runs under no_grad: no autograd graph, nothing saved.
/// With grad_output: builds the graph on fresh aliases of A1 and W1 (same storage, new
/// TensorImpl requiring grad), runs backward, and returns their grads. The caller's tensors
/// keep their values, requires_grad flags and grads; the graph is freed before return, so
/// the device then holds the inputs plus O3, dA1, dW1 only. Grad mode of the caller is restored.
/// `afterForward`, when set, is called once O3 exists and (with grad_output) before backward
/// runs, while the graph holds what it saved: reports list the saved tensors there.
/// Throws std::invalid_argument naming the argument: as matmulWithMultiHead and
/// importanceMask, "P" when its shape is not [b, s] or it is on another device, "grad_output"
/// when its shape is not [t, nh, e] or its dtype or device differ from A1's.
ImportanceResult matmulWithImportance(const Tensor& A1, const Tensor& P, const Tensor& W1,
                                      int64_t numHeads, double topP = 1.0,
                                      std::optional<int64_t> topK = std::nullopt,
                                      const Tensor& gradOutput = {},
                                      const std::function<void()>& afterForward = {});

}  // namespace matmulviz
