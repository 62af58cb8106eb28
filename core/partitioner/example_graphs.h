#pragma once
// Joint graphs written by hand the way AOTAutograd's decomposed joint graph looks for two model
// shapes, for tests, benchmarks and the budget view until a tracer produces them from the engine.
// FLOPs follow torch/utils/flop_counter.py (mm: 2*m*n*k; SDPA forward: 4*b*h*s_q*s_k*d,
// backward: 10*b*h*s_q*s_k*d for d_q = d_v = d).

#include "core/partitioner/joint_graph.h"

#include <cstdint>

namespace matmulviz::partitioner {

/// f(x, w_1..w_L) = sum(cos(mm(...cos(mm(cos(x), w_1))..., w_L))) with x and every w_i [n, n]
/// float32: forward cos, then per layer mm and cos, then sum; backward per layer (last first)
/// sin, neg, mul (cos' = -sin), mm(grad, t(w)) and mm(t(y), grad), and finally sin, neg, mul for x.
/// Gradients for x and every w_i. `parameters`: the w_i are static parameters.
JointGraph mmCosChain(int layers, int64_t n, bool parameters = false);

struct TransformerShape {
  int layers = 48;
  int64_t batch = 4, seq = 1024, dim = 1024, heads = 16, ffn = 4096;
  int64_t itemsize = 2;  ///< float16
};

/// A transformer-like chain: per layer x -> q, k, v (views of x) -> SDPA (efficient, a tuple of
/// the output and a float32 logsumexp) -> view -> mm(., w1) -> relu -> mm(., w2) -> x + that; the
/// loss sums the last x. Backward per layer: mm/t pairs for both matmuls, threshold_backward, the
/// SDPA backward (a tuple; three getitems), adds for the residual. The weights are parameters.
JointGraph transformerLike(const TransformerShape& shape = {});

}  // namespace matmulviz::partitioner
