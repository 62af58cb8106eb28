#include "core/autograd/engine.h"

#include "core/autograd/accumulate_grad.h"
#include "core/autograd/grad_mode.h"
#include "core/ops/ops.h"

#include <queue>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

namespace matmulviz {

namespace {

/// InputBuffer::accumulate: adds `g` into `slot`, in place when the slot is the only holder.
void accumulateInto(Tensor& slot, Tensor g) {
  if (!slot.defined()) {
    slot = std::move(g);
    return;
  }
  const bool soleOwner =
      slot.impl().use_count() == 1 && slot.storagePtr().use_count() == 1 && slot.isContiguous();
  if (soleOwner) {
    addInPlace(slot, g);
  } else if (g.impl().use_count() == 1 && g.storagePtr().use_count() == 1 && g.isContiguous()) {
    addInPlace(g, slot);
    slot = std::move(g);
  } else {
    slot = add(slot, g);
  }
}

struct ByPriority {
  bool operator()(const Node* a, const Node* b) const { return a->sequenceNr < b->sequenceNr; }
};

}  // namespace

TensorList AccumulateGrad::apply(TensorList&& grads) {
  Tensor g = std::move(grads.at(0));
  if (!g.defined()) return {};
  Tensor current = variable_.grad();
  if (!current.defined()) {
    const bool steal = g.impl().use_count() == 1 && g.storagePtr().use_count() == 1 &&
                       g.isContiguous() && g.storageOffset() == 0;
    Tensor owned = steal ? g : clone(g);
    owned.setLabel("grad of " + variable_.label());
    variable_.setGrad(owned);
  } else {
    addInPlace(current, g);
  }
  return {};
}

void runBackward(const Tensor& root, const Tensor& gradOutput) {
  if (!root.requiresGrad())
    throw std::logic_error(
        "element 0 of tensors does not require grad and does not have a grad_fn");
  if (gradOutput.sizes() != root.sizes())
    throw std::invalid_argument("grad_output has shape " + gradOutput.shapeString() +
                                " but the output has shape " + root.shapeString());
  NoGradGuard noGrad;
  const Edge rootEdge = gradientEdge(root);

  std::unordered_map<Node*, int> dependencies;
  {
    std::vector<Node*> stack{rootEdge.fn.get()};
    std::unordered_set<Node*> seen{rootEdge.fn.get()};
    while (!stack.empty()) {
      Node* n = stack.back();
      stack.pop_back();
      for (const Edge& e : n->nextEdges) {
        if (!e.valid()) continue;
        ++dependencies[e.fn.get()];
        if (seen.insert(e.fn.get()).second) stack.push_back(e.fn.get());
      }
    }
  }

  std::unordered_map<Node*, Tensor> buffers;
  std::priority_queue<Node*, std::vector<Node*>, ByPriority> ready;
  // Keep every node alive while the pass runs (edges own them; the root owns the graph).
  std::shared_ptr<Node> keepRoot = rootEdge.fn;
  buffers[rootEdge.fn.get()] = gradOutput;
  ready.push(rootEdge.fn.get());
  while (!ready.empty()) {
    Node* node = ready.top();
    ready.pop();
    TensorList inputs;
    {
      auto it = buffers.find(node);
      inputs.push_back(it == buffers.end() ? Tensor() : std::move(it->second));
      if (it != buffers.end()) buffers.erase(it);
    }
    TensorList outputs = node->apply(std::move(inputs));
    node->releaseSaved();
    for (size_t i = 0; i < node->nextEdges.size(); ++i) {
      const Edge& e = node->nextEdges[i];
      if (!e.valid()) continue;
      if (i < outputs.size() && outputs[i].defined()) {
        Tensor g = std::move(outputs[i]);
        accumulateInto(buffers[e.fn.get()], std::move(g));
      }
      if (--dependencies[e.fn.get()] == 0) ready.push(e.fn.get());
    }
  }
}

void Tensor::backward(const Tensor& gradOutput) const {
  runBackward(*this, gradOutput);
}

}  // namespace matmulviz
