#include "core/partitioner/example_graphs.h"

#include <stdexcept>
#include <vector>

namespace matmulviz::partitioner {

namespace {

CallOptions withFlops(int64_t flops) {
  CallOptions o;
  o.flops = flops;
  return o;
}

// grad * -sin(v): the decomposed backward of cos(v).
NodeId cosBackward(JointGraphBuilder& b, NodeId grad, NodeId v, int64_t bytes) {
  const NodeId s = b.call("sin", {v}, bytes);
  const NodeId neg = b.call("neg", {s}, bytes);
  return b.call("mul", {grad, neg}, bytes);
}

}  // namespace

JointGraph mmCosChain(int layers, int64_t n, bool parameters) {
  if (layers < 1 || n < 1) throw std::invalid_argument("mmCosChain: layers and n must be >= 1");
  const int64_t bytes = n * n * 4, flops = 2 * n * n * n;
  JointGraphBuilder b;
  const NodeId x = b.primal(bytes);
  std::vector<NodeId> w, h, y;
  for (int i = 0; i < layers; ++i) w.push_back(b.primal(bytes, parameters));
  y.push_back(b.call("cos", {x}, bytes));
  for (int i = 0; i < layers; ++i) {
    h.push_back(b.call("mm", {y.back(), w[static_cast<size_t>(i)]}, bytes, withFlops(flops)));
    y.push_back(b.call("cos", {h.back()}, bytes));
  }
  const NodeId loss = b.call("sum", {y.back()}, 4);
  const NodeId tangent = b.tangent(4);
  NodeId grad = b.call("expand", {tangent}, bytes);
  std::vector<NodeId> gradW(static_cast<size_t>(layers));
  for (int i = layers - 1; i >= 0; --i) {
    const auto k = static_cast<size_t>(i);
    const NodeId gradH = cosBackward(b, grad, h[k], bytes);
    const NodeId tw = b.call("t", {w[k]}, bytes);
    const NodeId gradY = b.call("mm", {gradH, tw}, bytes, withFlops(flops));
    const NodeId ty = b.call("t", {y[k]}, bytes);
    gradW[k] = b.call("mm", {ty, gradH}, bytes, withFlops(flops));
    grad = gradY;
  }
  std::vector<NodeId> grads{cosBackward(b, grad, x, bytes)};
  grads.insert(grads.end(), gradW.begin(), gradW.end());
  b.output({loss}, grads);
  return b.build();
}

namespace {

struct Layer {
  NodeId x, q, k, v, attn, out, lse, o, w1, h1, a, w2;
};

Layer forwardLayer(JointGraphBuilder& b, const TransformerShape& s, NodeId x, NodeId w1,
                   NodeId w2) {
  const int64_t tokens = s.batch * s.seq, act = tokens * s.dim * s.itemsize;
  const int64_t lseBytes = s.batch * s.heads * s.seq * 4;
  const int64_t sdpaFlops = 4 * s.batch * s.seq * s.seq * s.dim;  // 4*b*h*s*s*(dim/heads)
  Layer l{};
  l.x = x;
  l.w1 = w1;
  l.w2 = w2;
  l.q = b.call("view", {x}, act);
  l.k = b.call("view", {x}, act);
  l.v = b.call("view", {x}, act);
  l.attn = b.tupleCall("_scaled_dot_product_efficient_attention", {l.q, l.k, l.v}, act + lseBytes,
                       sdpaFlops);
  l.out = b.getitem(l.attn, act);
  l.lse = b.getitem(l.attn, lseBytes);
  l.o = b.call("view", {l.out}, act);
  l.h1 =
      b.call("mm", {l.o, w1}, tokens * s.ffn * s.itemsize, withFlops(2 * tokens * s.dim * s.ffn));
  l.a = b.call("relu", {l.h1}, tokens * s.ffn * s.itemsize);
  return l;
}

// Gradient of x (the layer's input) from g, the gradient of the layer's output; appends the
// weight gradients to gradW as (w1, w2).
NodeId backwardLayer(JointGraphBuilder& b, const TransformerShape& s, const Layer& l, NodeId g,
                     std::vector<NodeId>& gradW) {
  const int64_t tokens = s.batch * s.seq, act = tokens * s.dim * s.itemsize;
  const int64_t hidden = tokens * s.ffn * s.itemsize, weight = s.dim * s.ffn * s.itemsize;
  const int64_t mmFlops = 2 * tokens * s.dim * s.ffn;
  const NodeId tw2 = b.call("t", {l.w2}, weight);
  const NodeId ga = b.call("mm", {g, tw2}, hidden, withFlops(mmFlops));
  const NodeId ta = b.call("t", {l.a}, hidden);
  const NodeId gw2 = b.call("mm", {ta, g}, weight, withFlops(mmFlops));
  const NodeId gh1 = b.call("threshold_backward", {ga, l.a}, hidden);
  const NodeId tw1 = b.call("t", {l.w1}, weight);
  const NodeId go = b.call("mm", {gh1, tw1}, act, withFlops(mmFlops));
  const NodeId to = b.call("t", {l.o}, act);
  const NodeId gw1 = b.call("mm", {to, gh1}, weight, withFlops(mmFlops));
  const NodeId gout = b.call("view", {go}, act);
  const NodeId bw = b.tupleCall("_scaled_dot_product_efficient_attention_backward",
                                {gout, l.q, l.k, l.v, l.out, l.lse}, 3 * act,
                                10 * s.batch * s.seq * s.seq * s.dim);
  const NodeId gq = b.getitem(bw, act), gk = b.getitem(bw, act), gv = b.getitem(bw, act);
  const NodeId gqk = b.call("add", {gq, gk}, act);
  const NodeId gqkv = b.call("add", {gqk, gv}, act);
  const NodeId gx = b.call("view", {gqkv}, act);
  gradW.push_back(gw1);
  gradW.push_back(gw2);
  return b.call("add", {g, gx}, act);
}

}  // namespace

JointGraph transformerLike(const TransformerShape& s) {
  if (s.layers < 1 || s.heads < 1 || s.dim % s.heads != 0)
    throw std::invalid_argument("transformerLike: need layers >= 1 and heads dividing dim");
  const int64_t tokens = s.batch * s.seq, act = tokens * s.dim * s.itemsize;
  const int64_t weight = s.dim * s.ffn * s.itemsize;
  JointGraphBuilder b;
  NodeId x = b.primal(act);
  std::vector<std::pair<NodeId, NodeId>> w;
  for (int i = 0; i < s.layers; ++i) w.emplace_back(b.primal(weight, true), b.primal(weight, true));
  std::vector<Layer> layers;
  for (int i = 0; i < s.layers; ++i) {
    layers.push_back(
        forwardLayer(b, s, x, w[static_cast<size_t>(i)].first, w[static_cast<size_t>(i)].second));
    const NodeId h2 = b.call("mm", {layers.back().a, layers.back().w2}, act,
                             withFlops(2 * tokens * s.ffn * s.dim));
    x = b.call("add", {x, h2}, act);
  }
  const NodeId loss = b.call("sum", {x}, s.itemsize);
  NodeId g = b.call("expand", {b.tangent(s.itemsize)}, act);
  std::vector<std::vector<NodeId>> gradW(static_cast<size_t>(s.layers));
  for (int i = s.layers - 1; i >= 0; --i) {
    const auto k = static_cast<size_t>(i);
    g = backwardLayer(b, s, layers[k], g, gradW[k]);
  }
  std::vector<NodeId> grads{g};
  for (const auto& pair : gradW) grads.insert(grads.end(), pair.begin(), pair.end());
  b.output({loss}, grads);
  return b.build();
}

}  // namespace matmulviz::partitioner
