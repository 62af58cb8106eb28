#pragma once
// Autograd graph nodes, as torch.autograd.graph.Node: each op that needs a gradient records a
// node holding the tensors its backward formula needs (SavedTensor) and edges to the nodes of
// its inputs. Names follow PyTorch's (MmBackward0, BmmBackward0, IndexBackward0, ...), so the
// memory report can say "saved as mat2 of BmmBackward0".

#include "core/tensor/tensor.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace matmulviz {

using TensorList = std::vector<Tensor>;

struct Edge {
  std::shared_ptr<Node> fn;
  uint32_t inputNr = 0;
  bool valid() const { return fn != nullptr; }
};

/// A tensor kept for backward. Registers itself as a holder of the tensor's storage so reports
/// can say why the storage is alive; unregisters when released.
class SavedTensor {
 public:
  SavedTensor() = default;
  SavedTensor(Tensor t, std::string why);
  ~SavedTensor();
  SavedTensor(SavedTensor&& o) noexcept;
  SavedTensor& operator=(SavedTensor&& o) noexcept;
  SavedTensor(const SavedTensor&) = delete;
  SavedTensor& operator=(const SavedTensor&) = delete;
  /// The saved tensor. Throws std::runtime_error with PyTorch's message ("one of the variables
  /// needed for gradient computation has been modified by an inplace operation: ...") when its
  /// storage was written in place since it was saved (torch/csrc/autograd/saved_variable.cpp).
  const Tensor& get() const;
  bool defined() const { return tensor_.defined(); }
  /// Names the node that produced the saved tensor, for a saved output (a "result") whose
  /// handle has no grad_fn yet: the error of get() then says "which is output 0 of <node>".
  void setProducer(const std::string& node, uint32_t outputNr = 0) {
    producer_ = ", which is output " + std::to_string(outputNr) + " of " + node;
  }
  void reset();

 private:
  Tensor tensor_;
  std::string why_;
  uint64_t version_ = 0;  ///< the storage's version when saved
  std::string producer_;  ///< ", which is output 0 of MmBackward0" when it had a grad_fn
};

class Node : public std::enable_shared_from_this<Node> {
 public:
  Node();
  /// Tears the graph down as PyTorch's deleteNode does (torch/csrc/autograd/function.cpp):
  /// iteratively, not recursively; each next node that only this one holds is pushed on a stack
  /// and, when popped (the last pushed first), releases its saved tensors before its own next
  /// nodes are gathered. So a graph's saved tensors are freed in that order, and a deep graph
  /// cannot overflow the C++ stack.
  virtual ~Node();
  /// PyTorch's class name of the node, e.g. "BmmBackward0".
  virtual std::string name() const = 0;
  /// Gradients w.r.t. the node's inputs (one per next edge; undefined where not needed), given
  /// the gradients w.r.t. its outputs.
  virtual TensorList apply(TensorList&& gradOutputs) = 0;
  /// Drops saved tensors after backward ran (retain_graph=False).
  virtual void releaseSaved() {}
  /// The tensors this node saved for backward, by PyTorch's names ("self", "mat2", "indices",
  /// "result"); an undefined Tensor for a slot not saved. Exposed as grad_fn._saved_<name>.
  virtual std::vector<std::pair<std::string, Tensor>> savedTensors() const { return {}; }
  /// Whether any saved tensor is defined (so a second pass through this node must fail).
  bool hasSaved() const {
    try {
      for (const auto& [name, t] : savedTensors())
        if (t.defined()) return true;
    } catch (const std::runtime_error&) {  // modified in place since: still saved
      return true;
    }
    return false;
  }
  /// Set when a pass without retain_graph freed this node's saved tensors.
  bool savedReleased = false;

  /// Whether input i's gradient is needed (its edge leads somewhere).
  bool needsInputGrad(size_t i) const { return i < nextEdges.size() && nextEdges[i].valid(); }

  std::vector<Edge> nextEdges;
  uint64_t sequenceNr;
};

/// The edge a gradient for `t` flows into: its grad_fn, or its AccumulateGrad when it is a leaf
/// that requires grad, or an invalid edge.
Edge gradientEdge(const Tensor& t);
/// True when grad mode is on and any input requires grad.
bool anyRequiresGrad(std::initializer_list<const Tensor*> inputs);
bool anyRequiresGrad(const TensorList& inputs);
/// Connects `node` to `inputs` and makes `output` its output `outputNr` requiring grad.
void setHistory(const Tensor& output, const std::shared_ptr<Node>& node, uint32_t outputNr = 0);
/// Why a tensor is saved, for reports: "saved as mat2 of BmmBackward0 because a requires grad".
std::string savedWhy(const std::string& role, const std::string& node, const Tensor& needing);

}  // namespace matmulviz
