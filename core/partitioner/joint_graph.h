#pragma once
// The joint forward+backward graph that PyTorch's min-cut partitioner works on (AOTAutograd's
// joint FX graph after decomposition: PyTorch, torch/_functorch/partitioners.py,
// min_cut_rematerialization_partition), reduced to what the partitioner reads: for every node in
// graph order its name, aten op packet name, kind, argument nodes, users, the bytes of its value
// (_size_of), whether the value is a tensor, a tuple of tensors or something else, the storage the
// value lives in (get_node_storage, for the rule that keeps input aliases out of the knapsack), a
// static-parameter flag (static_lifetime_input_nodes) and its FLOPs as FlopCounterMode would count
// them (for estimate_runtime). Plain C++20, no Qt.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace matmulviz::partitioner {

/// A node's position in graph order (0-based).
using NodeId = int32_t;
/// `n` as an index into per-node vectors (n >= 0).
inline size_t ix(NodeId n) {
  return static_cast<size_t>(n);
}
/// "No node": a gradient output that is None.
inline constexpr NodeId kNoNode = -1;

/// FX's node kinds as the partitioner distinguishes them: `primals_*` placeholders (every forward
/// input), `tangents_*` placeholders (incoming gradients), call_function nodes and the single
/// output node. (RNG seed/offset placeholders and get_attr nodes are not modelled.)
enum class NodeKind : uint8_t { Primal, Tangent, CallFunction, Output };

/// What the node's value (meta["val"]) is: one tensor; a tuple of tensors (SDPA, native_dropout:
/// its getitem children carry the tensors); anything else (None, an opaque object).
enum class ValueKind : uint8_t { Tensor, Tuple, NonTensor };

struct Node {
  std::string name;  ///< FX name: "primals_1", "tangents_1", "mm", "mm_1", ..., "output"
  std::string op;    ///< aten packet name ("mm", "cos", "t", "getitem"); empty unless CallFunction
  NodeKind kind = NodeKind::CallFunction;
  ValueKind value = ValueKind::Tensor;
  /// Top-level positional arguments that are nodes, in order, repeats kept (mul(x, x) lists x
  /// twice). PyTorch's reduction ban sums the sizes of exactly these.
  std::vector<NodeId> args;
  /// Other node inputs: nodes inside list arguments (cat's tensors) or keyword arguments. They make
  /// the node a user but do not enter the reduction ban.
  std::vector<NodeId> nestedArgs;
  /// Nodes that take this one as an input, in graph order, each once (FX's node.users).
  std::vector<NodeId> users;
  int64_t bytes = 0;  ///< _size_of: numel * itemsize; a tuple: the sum over its tensors
  /// get_node_storage: the storage the tensor value lives in (views share their base's);
  /// nullopt for tuples and non-tensors.
  std::optional<int64_t> storage;
  bool staticParameter = false;  ///< a parameter or buffer (static lifetime input)
  int64_t flops = 0;             ///< FLOPs FlopCounterMode counts for this op (0 for most)
};

/// A joint graph, immutable once built (by JointGraphBuilder). Node ids are graph positions.
class JointGraph {
 public:
  const std::vector<Node>& nodes() const { return nodes_; }
  const Node& node(NodeId id) const { return nodes_.at(static_cast<size_t>(id)); }
  NodeId size() const { return static_cast<NodeId>(nodes_.size()); }
  /// The output node (always the last node).
  NodeId outputNode() const { return size() - 1; }
  /// The first num_fwd_outputs entries of the output node's flattened arguments.
  std::span<const NodeId> forwardOutputs() const { return forwardOutputs_; }
  /// The remaining entries: one gradient per primal, kNoNode where PyTorch has None.
  std::span<const NodeId> gradOutputs() const { return gradOutputs_; }
  /// The node called `name`, if any.
  std::optional<NodeId> find(std::string_view name) const;

 private:
  friend class JointGraphBuilder;
  std::vector<Node> nodes_;
  std::vector<NodeId> forwardOutputs_;
  std::vector<NodeId> gradOutputs_;
};

/// Options of a call_function node beyond its op, arguments and size.
struct CallOptions {
  int64_t flops = 0;
  ValueKind value = ValueKind::Tensor;
  std::vector<NodeId> nestedArgs;  ///< list/keyword node inputs (see Node::nestedArgs)
  /// Storage of the value. Default: a view op (see isViewOp) of a tensor shares its first
  /// argument's storage; any other tensor gets a fresh storage; tuples and non-tensors none.
  std::optional<int64_t> storage;
  std::string name;  ///< default: FX's naming, the op then op_1, op_2, ...
};

/// Writes a joint graph compactly, in graph order. Every argument must be an earlier node.
/// Sizes are bytes (_size_of), FLOPs as FlopCounterMode counts them. Throws std::invalid_argument
/// on a bad argument id, a duplicate name, a second output or nodes added after the output;
/// build() throws std::logic_error without an output node.
class JointGraphBuilder {
 public:
  /// A forward input `primals_<k>` (k counts primals from 1). `parameter`: static lifetime.
  NodeId primal(int64_t bytes, bool parameter = false);
  /// An incoming gradient `tangents_<k>`.
  NodeId tangent(int64_t bytes);
  /// A call_function node computing aten `op` from `args` (top-level positional node args).
  NodeId call(std::string_view op, std::vector<NodeId> args, int64_t bytes, CallOptions o = {});
  /// A multi-output op (SDPA, native_dropout): a tuple node of `bytes` (sum of its tensors).
  NodeId tupleCall(std::string_view op, std::vector<NodeId> args, int64_t bytes, int64_t flops);
  /// getitem(tuple, i): one tensor of a tuple node, of `bytes`, fresh storage (the index itself
  /// does not matter to the partitioner and is not recorded; call in output order).
  NodeId getitem(NodeId tuple, int64_t bytes);
  /// A node exactly as given (a file reader's): kind Primal, Tangent or CallFunction with its
  /// name, storage, flags and FLOPs kept; users are derived by build(). Throws
  /// std::invalid_argument as the others do, and for kind Output (use output()).
  NodeId node(Node n);
  /// The output node: forward outputs first, then one gradient per primal (kNoNode = None).
  void output(std::vector<NodeId> forwardOutputs, std::vector<NodeId> gradOutputs);
  /// Takes the name the next call of `op` would get, for a node traced and then merged into an
  /// equal one by common-subexpression elimination (torch/_functorch/compile_utils.py,
  /// fx_graph_cse): FX named it when it was traced, so the nodes after it keep their names.
  void skipName(std::string_view op) { freshName(op); }
  /// The finished graph; users are derived here.
  JointGraph build() const;

 private:
  NodeId add(Node n);
  std::string freshName(std::string_view op);
  JointGraph graph_;
  int primals_ = 0, tangents_ = 0;
  int64_t nextStorage_ = 0;
  bool hasOutput_ = false;
  std::vector<std::pair<std::string, int>> opCounts_;
  std::unordered_set<std::string> names_;
};

}  // namespace matmulviz::partitioner
