#include "core/partitioner/node_info.h"

#include <algorithm>

namespace matmulviz::partitioner {

namespace {

void markRequiredBw(const JointGraph& g, NodeInfo& info) {
  for (NodeId i = 0; i < g.size(); ++i) {
    const Node& n = g.node(i);
    if (n.kind == NodeKind::Tangent) info.requiredBw[ix(i)] = 1;
    if (info.requiredBw[ix(i)])
      for (NodeId u : n.users) info.requiredBw[ix(u)] = 1;
  }
  for (NodeId grad : g.gradOutputs())
    if (grad != kNoNode) info.requiredBw[ix(grad)] = 1;
}

void markRequiredFw(const JointGraph& g, NodeInfo& info) {
  for (NodeId i = 0; i < g.size(); ++i) {
    const Node& n = g.node(i);
    bool dep = n.kind == NodeKind::Tangent;
    for (NodeId a : n.args) dep = dep || info.tangentDependent[ix(a)];
    for (NodeId a : n.nestedArgs) dep = dep || info.tangentDependent[ix(a)];
    info.tangentDependent[ix(i)] = dep ? 1 : 0;
  }
  // Dead-code elimination of the forward-only graph: live if a forward output or used by a live
  // node; tangent-dependent nodes are not part of that graph.
  std::vector<char> live(ix(g.size()), 0);
  for (NodeId o : g.forwardOutputs())
    if (!info.tangentDependent[ix(o)]) live[ix(o)] = 1;
  for (NodeId i = g.size() - 1; i >= 0; --i) {
    const Node& n = g.node(i);
    if (n.kind == NodeKind::Output || info.tangentDependent[ix(i)]) continue;
    for (NodeId u : n.users)
      if (live[ix(u)] && g.node(u).kind != NodeKind::Output) live[ix(i)] = 1;
    if (n.kind == NodeKind::Primal) live[ix(i)] = 1;  // placeholders survive elimination
    info.requiredFw[ix(i)] = live[ix(i)];
  }
}

}  // namespace

bool NodeInfo::hasBackward() const {
  return std::any_of(requiredBw.begin(), requiredBw.end(), [](char c) { return c != 0; });
}

NodeInfo classifyNodes(const JointGraph& g) {
  NodeInfo info;
  const size_t n = ix(g.size());
  info.requiredBw.assign(n, 0);
  info.requiredFw.assign(n, 0);
  info.unclaimed.assign(n, 0);
  info.fwOrder.assign(n, -1);
  info.distFromBw.assign(n, 0);
  info.tangentDependent.assign(n, 0);
  info.input.assign(n, 0);
  for (NodeId i = 0; i < g.size(); ++i) {
    if (g.node(i).kind != NodeKind::Primal) continue;
    info.inputs.push_back(i);
    info.input[ix(i)] = 1;
  }
  markRequiredBw(g, info);
  markRequiredFw(g, info);
  int32_t order = 0;
  for (size_t i = 0; i < n; ++i) {
    info.unclaimed[i] = !info.requiredFw[i] && !info.requiredBw[i];
    if (info.requiredFw[i]) info.fwOrder[i] = order++;
  }
  for (NodeId i = g.size() - 1; i >= 0; --i) {
    int64_t& d = info.distFromBw[ix(i)];
    if (g.node(i).kind == NodeKind::Output) {
      d = kFarFromBackward;
    } else if (!info.isRequiredFw(i)) {
      d = 0;
    } else {
      d = kFarFromBackward;
      for (NodeId u : g.node(i).users) d = std::min(d, info.distFromBw[ix(u)] + 1);
    }
  }
  return info;
}

}  // namespace matmulviz::partitioner
