// The fused attention ops called one by one, as a compiled joint graph runs them
// (native_functions.yaml: _scaled_dot_product_efficient_attention, _flash_attention and their
// _backward; tools/autograd/derivatives.yaml): the forward returns the tensors autograd would
// save, the backward takes them back. The kernels themselves are attention.cpp's.
#include "core/ops/attention.h"
#include "core/ops/attention_kernel.h"
#include "core/ops/ops.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace matmulviz {

namespace {

/// The kernel PyTorch runs for these inputs (selectKernel's checks), which must be `flash`.
detail::FusedKernel checkedKernel(bool flash, const Tensor& q, const Tensor& k, const Tensor& v,
                                  bool isCausal, std::optional<double> scale) {
  AttentionOptions options;
  options.isCausal = isCausal;
  options.scale = scale;
  const detail::FusedKernel kernel = detail::selectKernel(q, k, v, options);
  if (kernel.flash != flash)
    throw std::invalid_argument(
        std::string(flash ? "aten._scaled_dot_product_flash_attention"
                          : "aten._scaled_dot_product_efficient_attention") +
        ": PyTorch runs these inputs on the other kernel (" + kernel.op + ")");
  return kernel;
}

double scaleOf(const Tensor& q, std::optional<double> scale) {
  return scale.value_or(1.0 / std::sqrt(static_cast<double>(q.size(3))));
}

}  // namespace

bool sdpaUsesFlash(const Tensor& q, const Tensor& k, const Tensor& v,
                   const AttentionOptions& options) {
  return detail::selectKernel(q, k, v, options).flash;
}

FusedAttentionOutputs scaledDotProductFusedAttention(bool flash, const Tensor& q, const Tensor& k,
                                                     const Tensor& v, bool computeLogSumExp,
                                                     bool isCausal, std::optional<double> scale) {
  const detail::FusedKernel kernel = checkedKernel(flash, q, k, v, isCausal, scale);
  OpScope op(q.device(), std::string(kernel.op).substr(5));
  const detail::AttentionProblem p{q, k, v, Tensor(), isCausal, scaleOf(q, scale)};
  auto [out, lse] = detail::fusedAttentionForward(kernel, p, computeLogSumExp);
  return {out, lse, zeros({}, DType::Int64, nullptr, "philox_seed"),
          zeros({}, DType::Int64, nullptr, "philox_offset")};
}

std::array<Tensor, 3> scaledDotProductFusedAttentionBackward(bool flash, const Tensor& gradOut,
                                                             const Tensor& q, const Tensor& k,
                                                             const Tensor& v, const Tensor& out,
                                                             const Tensor& logsumexp, bool isCausal,
                                                             std::optional<double> scale) {
  const detail::FusedKernel kernel = checkedKernel(flash, q, k, v, isCausal, scale);
  const Shape outShape{q.size(0), q.size(1), q.size(2), v.size(3)};
  if (gradOut.sizes() != outShape || out.sizes() != outShape)
    throw std::invalid_argument(std::string(kernel.backwardOp) + ": grad_out " +
                                shapeToString(gradOut.sizes()) + " and out " +
                                shapeToString(out.sizes()) + " must be " + shapeToString(outShape));
  if (logsumexp.dim() != 3 || logsumexp.size(2) < q.size(2))
    throw std::invalid_argument(std::string(kernel.backwardOp) + ": logsumexp " +
                                shapeToString(logsumexp.sizes()) +
                                " has fewer than L = " + std::to_string(q.size(2)) + " rows");
  const detail::AttentionProblem p{q, k, v, Tensor(), isCausal, scaleOf(q, scale)};
  return detail::fusedAttentionBackward(kernel, p, out, logsumexp, gradOut);
}

}  // namespace matmulviz
