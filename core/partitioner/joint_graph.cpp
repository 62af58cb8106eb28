#include "core/partitioner/joint_graph.h"

#include "core/partitioner/op_types.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace matmulviz::partitioner {

std::optional<NodeId> JointGraph::find(std::string_view name) const {
  for (NodeId i = 0; i < size(); ++i)
    if (nodes_[static_cast<size_t>(i)].name == name) return i;
  return std::nullopt;
}

namespace {

/// Whether FX gives a node named `op` a suffix from its first one on: the Python builtins an op
/// name can equal (torch/fx/graph.py, _Namespace._is_illegal_name: a builtin or a keyword).
bool isPythonBuiltin(std::string_view op) {
  static constexpr std::string_view kBuiltins[] = {"abs",   "all", "any",   "max", "min",   "pow",
                                                   "round", "sum", "slice", "len", "divmod"};
  return std::find(std::begin(kBuiltins), std::end(kBuiltins), op) != std::end(kBuiltins);
}

}  // namespace

std::string JointGraphBuilder::freshName(std::string_view op) {
  for (auto& [name, count] : opCounts_) {
    if (name == op) return std::string(op) + "_" + std::to_string(count++);
  }
  if (isPythonBuiltin(op)) {  // "sum" is taken: FX names the first sum "sum_1"
    opCounts_.emplace_back(std::string(op), 2);
    return std::string(op) + "_1";
  }
  opCounts_.emplace_back(std::string(op), 1);
  return std::string(op);
}

NodeId JointGraphBuilder::add(Node n) {
  if (hasOutput_)
    throw std::invalid_argument("JointGraphBuilder: node '" + n.name + "' after output");
  const NodeId id = graph_.size();
  auto checkArg = [&](NodeId a) {
    if (a < 0 || a >= id)
      throw std::invalid_argument("JointGraphBuilder: node '" + n.name + "' has argument " +
                                  std::to_string(a) + ", not an earlier node");
  };
  for (NodeId a : n.args) checkArg(a);
  for (NodeId a : n.nestedArgs) checkArg(a);
  if (n.bytes < 0) throw std::invalid_argument("JointGraphBuilder: negative size of " + n.name);
  if (!names_.insert(n.name).second)
    throw std::invalid_argument("JointGraphBuilder: duplicate node name '" + n.name + "'");
  graph_.nodes_.push_back(std::move(n));
  return id;
}

NodeId JointGraphBuilder::node(Node n) {
  if (n.kind == NodeKind::Output)
    throw std::invalid_argument("JointGraphBuilder: the output node is added by output()");
  n.users.clear();
  if (n.storage) nextStorage_ = std::max(nextStorage_, *n.storage + 1);
  return add(std::move(n));
}

NodeId JointGraphBuilder::primal(int64_t bytes, bool parameter) {
  Node n;
  n.name = "primals_" + std::to_string(++primals_);
  n.kind = NodeKind::Primal;
  n.bytes = bytes;
  n.storage = nextStorage_++;
  n.staticParameter = parameter;
  return add(std::move(n));
}

NodeId JointGraphBuilder::tangent(int64_t bytes) {
  Node n;
  n.name = "tangents_" + std::to_string(++tangents_);
  n.kind = NodeKind::Tangent;
  n.bytes = bytes;
  n.storage = nextStorage_++;
  return add(std::move(n));
}

NodeId JointGraphBuilder::call(std::string_view op, std::vector<NodeId> args, int64_t bytes,
                               CallOptions o) {
  Node n;
  n.name = o.name.empty() ? freshName(op) : std::move(o.name);
  n.op = std::string(op);
  n.kind = NodeKind::CallFunction;
  n.value = o.value;
  n.args = std::move(args);
  n.nestedArgs = std::move(o.nestedArgs);
  n.bytes = bytes;
  n.flops = o.flops;
  if (o.storage) {
    n.storage = o.storage;
  } else if (o.value == ValueKind::Tensor) {
    const bool aliases = isViewOp(op) && !n.args.empty() && n.args[0] >= 0 &&
                         n.args[0] < graph_.size() && graph_.node(n.args[0]).storage;
    n.storage = aliases ? graph_.node(n.args[0]).storage : std::optional<int64_t>(nextStorage_++);
  }
  return add(std::move(n));
}

NodeId JointGraphBuilder::tupleCall(std::string_view op, std::vector<NodeId> args, int64_t bytes,
                                    int64_t flops) {
  CallOptions o;
  o.flops = flops;
  o.value = ValueKind::Tuple;
  return call(op, std::move(args), bytes, std::move(o));
}

NodeId JointGraphBuilder::getitem(NodeId tuple, int64_t bytes) {
  return call("getitem", {tuple}, bytes);
}

void JointGraphBuilder::output(std::vector<NodeId> forwardOutputs, std::vector<NodeId> grads) {
  Node n;
  n.name = "output";
  n.kind = NodeKind::Output;
  n.value = ValueKind::NonTensor;
  n.args = forwardOutputs;
  for (NodeId g : grads)
    if (g != kNoNode) n.args.push_back(g);
  add(std::move(n));
  hasOutput_ = true;
  graph_.forwardOutputs_ = std::move(forwardOutputs);
  graph_.gradOutputs_ = std::move(grads);
}

JointGraph JointGraphBuilder::build() const {
  if (!hasOutput_) throw std::logic_error("JointGraphBuilder::build: the graph has no output node");
  JointGraph g = graph_;
  for (NodeId u = 0; u < g.size(); ++u) {
    const Node& n = g.nodes_[static_cast<size_t>(u)];
    auto link = [&](NodeId a) {
      auto& users = g.nodes_[static_cast<size_t>(a)].users;
      if (users.empty() || users.back() != u) users.push_back(u);
    };
    for (NodeId a : n.args) link(a);
    for (NodeId a : n.nestedArgs) link(a);
  }
  return g;
}

}  // namespace matmulviz::partitioner
