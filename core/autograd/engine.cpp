#include "core/autograd/engine.h"
#include "core/memory/cublas_workspace.h"

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
    Tensor owned = steal ? g : clone(g, MemoryFormat::Contiguous);
    owned.setLabel("grad of " + variable_.label()).setCategory(MemoryCategory::Gradients);
    variable_.setGrad(owned);
  } else {
    addInPlace(current, g);
  }
  return {};
}

namespace {

thread_local int keepGraphState = -1;  // -1: no pass runs; else the running pass's retain_graph

/// Sets the running pass's retain_graph for currentPassKeepsGraph(), restoring the outer one.
class KeepGraphScope {
 public:
  explicit KeepGraphScope(bool keep) : outer_(keepGraphState) { keepGraphState = keep ? 1 : 0; }
  ~KeepGraphScope() { keepGraphState = outer_; }
  KeepGraphScope(const KeepGraphScope&) = delete;
  KeepGraphScope& operator=(const KeepGraphScope&) = delete;

 private:
  int outer_;
};

/// Gradients arriving at these nodes are taken (autograd.grad) instead of passed on.
using Captures = std::unordered_map<Node*, Tensor>;

/// A shape as Python prints a torch.Size: "torch.Size([2, 3])".
std::string torchSize(const Shape& sizes) {
  std::string s = "torch.Size([";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "])";
}

void checkRoot(const Tensor& root, const Tensor& gradOutput) {
  if (!root.requiresGrad())
    throw std::logic_error(
        "element 0 of tensors does not require grad and does not have a grad_fn");
  if (gradOutput.sizes() != root.sizes())
    throw std::logic_error("Mismatch in shape: grad_output[0] has a shape of " +
                           torchSize(gradOutput.sizes()) + " and output[0] has a shape of " +
                           torchSize(root.sizes()) + ".");
}

std::unordered_map<Node*, int> countDependencies(Node* root) {
  std::unordered_map<Node*, int> dependencies;
  std::vector<Node*> stack{root};
  std::unordered_set<Node*> seen{root};
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const Edge& e : n->nextEdges) {
      if (!e.valid()) continue;
      ++dependencies[e.fn.get()];
      if (seen.insert(e.fn.get()).second) stack.push_back(e.fn.get());
    }
  }
  return dependencies;
}

/// Runs the graph under `root`. With `captures` (autograd.grad), a gradient reaching a captured
/// node is stored there, and no AccumulateGrad runs.
void execute(const Tensor& root, const Tensor& gradOutput, bool retainGraph, Captures* captures) {
  checkRoot(root, gradOutput);
  NoGradGuard noGrad;
  KeepGraphScope keep(retainGraph);
  // What a backward allocates is gradient memory (its ops' results, zeros, sums), unless the
  // code that allocates it says otherwise.
  CategoryScope gradients(root.device(), MemoryCategory::Gradients);
  // PyTorch's engine runs a CUDA graph on its device thread, whose cuBLAS handle (and
  // workspace) is not the caller's (core/memory/cublas_workspace.h).
  AutogradThreadScope autogradThread;
  const Edge rootEdge = gradientEdge(root);
  std::unordered_map<Node*, int> dependencies = countDependencies(rootEdge.fn.get());

  // One gradient per output of a node (InputBuffer): an edge's inputNr is the output it feeds,
  // as several outputs of one node (SplitBackward0) each get their own.
  std::unordered_map<Node*, TensorList> buffers;
  auto slot = [&buffers](Node* n, uint32_t nr) -> Tensor& {
    TensorList& list = buffers[n];
    if (list.size() <= nr) list.resize(nr + 1);
    return list[nr];
  };
  std::priority_queue<Node*, std::vector<Node*>, ByPriority> ready;
  // Keep every node alive while the pass runs (edges own them; the root owns the graph).
  std::shared_ptr<Node> keepRoot = rootEdge.fn;
  slot(rootEdge.fn.get(), rootEdge.inputNr) = gradOutput;
  ready.push(rootEdge.fn.get());
  while (!ready.empty()) {
    Node* node = ready.top();
    ready.pop();
    TensorList inputs;
    if (auto it = buffers.find(node); it != buffers.end()) {
      inputs = std::move(it->second);
      buffers.erase(it);
    }
    if (inputs.empty()) inputs.resize(1);
    if (captures) {
      if (auto c = captures->find(node); c != captures->end()) c->second = inputs[0];
      if (dynamic_cast<AccumulateGrad*>(node)) continue;
    }
    if (node->savedReleased)
      throw std::logic_error(
          "Trying to backward through the graph a second time (or directly access saved tensors "
          "after they have already been freed). Saved intermediate values of the graph are freed "
          "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need "
          "to backward through the graph a second time or if you need to access saved tensors "
          "after calling backward.");
    TensorList outputs = node->apply(std::move(inputs));
    // The incoming gradients die with call_function's inputs, before release_variables()
    // (torch/csrc/autograd/engine.cpp: evaluate_function).
    inputs = TensorList();
    if (!retainGraph) {
      node->savedReleased = node->hasSaved();
      node->releaseSaved();
    }
    for (size_t i = 0; i < node->nextEdges.size(); ++i) {
      const Edge& e = node->nextEdges[i];
      if (!e.valid()) continue;
      if (i < outputs.size() && outputs[i].defined()) {
        Tensor g = std::move(outputs[i]);
        accumulateInto(slot(e.fn.get(), e.inputNr), std::move(g));
      }
      if (--dependencies[e.fn.get()] == 0) ready.push(e.fn.get());
    }
  }
}

}  // namespace

bool currentPassKeepsGraph() {
  return keepGraphState != 0;
}

void runBackward(const Tensor& root, const Tensor& gradOutput, bool retainGraph) {
  execute(root, gradOutput, retainGraph, nullptr);
}

TensorList runGrad(const Tensor& root, const Tensor& gradOutput, const TensorList& inputs,
                   bool retainGraph) {
  if (!root.requiresGrad())  // the outputs are checked before the inputs, as in PyTorch
    throw std::logic_error(
        "element 0 of tensors does not require grad and does not have a grad_fn");
  Captures captures;
  std::vector<Node*> nodes;
  for (const Tensor& t : inputs) {
    if (!t.requiresGrad())
      throw std::logic_error("One of the differentiated Tensors does not require grad");
    const Edge e = gradientEdge(t);
    nodes.push_back(e.fn.get());
    captures.emplace(e.fn.get(), Tensor());
  }
  // Keep the inputs' nodes alive while the pass runs (a leaf's AccumulateGrad is weakly held).
  std::vector<std::shared_ptr<Node>> keep;
  for (const Tensor& t : inputs) keep.push_back(gradientEdge(t).fn);
  execute(root, gradOutput, retainGraph, &captures);
  TensorList out;
  for (Node* n : nodes) out.push_back(captures.at(n));
  return out;
}

void Tensor::backward(const Tensor& gradOutput) const {
  runBackward(*this, gradOutput);
}

}  // namespace matmulviz
