// The flow network of PyTorch's solve_min_cut (PyTorch, torch/_functorch/partitioners.py), with
// its node weights and ban heuristics. The cut itself is in min_cut.cpp.
#include "core/partitioner/min_cut_network.h"

#include "core/partitioner/op_types.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>
#include <set>
#include <utility>

namespace matmulviz::partitioner {

namespace {

// is_materialized_backwards: from X through its view users, does some visited node have a user
// outside the forward graph that cannot fuse with it?
bool isMaterializedBackwards(const JointGraph& g, const NodeInfo& info, NodeId x) {
  if (isView(g.node(x))) return false;
  std::vector<NodeId> pending{x};
  while (!pending.empty()) {
    const NodeId cur = pending.back();
    pending.pop_back();
    for (NodeId u : g.node(cur).users) {
      if (!info.isRequiredFw(u) && !isFusible(g.node(cur), g.node(u))) return true;
      if (isView(g.node(u))) pending.push_back(u);
    }
  }
  return false;
}

// is_materialized: a placeholder, or some user cannot fuse with it.
bool isMaterialized(const JointGraph& g, NodeId x) {
  const Node& n = g.node(x);
  if (n.kind == NodeKind::Primal || n.kind == NodeKind::Tangent) return true;
  return std::any_of(n.users.begin(), n.users.end(),
                     [&](NodeId u) { return !isFusible(n, g.node(u)); });
}

class NetworkBuilder {
 public:
  NetworkBuilder(const JointGraph& g, const NodeInfo& info, const MinCutOptions& options,
                 std::span<const NodeId> dontBan)
      : g_(g), info_(info), options_(options), dontBan_(ix(g.size()), 0) {
    for (NodeId n : dontBan) dontBan_.at(ix(n)) = 1;
    net_.vertexCount = 2 + 2 * g.size();
    net_.isBanned.assign(ix(g.size()), 0);
  }

  detail::FlowNetwork build() {
    for (NodeId x = 0; x < g_.size(); ++x) addNode(x);
    if (options_.banIfUsedFarApart) banUsedFarApart();
    if (options_.banIfLongFusibleChains) banLongFusibleChains();
    return std::move(net_);
  }

 private:
  using FN = detail::FlowNetwork;

  void edge(int32_t from, int32_t to, int64_t capacity) {
    net_.edges.push_back({from, to, capacity});
  }

  // ban_recomputation_if_allowed
  void ban(NodeId x) {
    if (isView(g_.node(x)) || dontBan_[ix(x)] || net_.isBanned[ix(x)]) return;
    net_.isBanned[ix(x)] = 1;
    net_.banned.push_back(x);
    edge(FN::kSource, FN::in(x), detail::kInfinite);
  }

  void addNode(NodeId x) {
    const Node& n = g_.node(x);
    if (n.kind == NodeKind::Output) return;
    if (info_.isRequiredBw(x)) {
      if (!info_.isInput(x)) {
        edge(FN::in(x), FN::kSink, detail::kInfinite);
        return;
      }
      edge(FN::out(x), FN::kSink, detail::kInfinite);
    }
    if (n.kind == NodeKind::Primal) ban(x);
    if (info_.isRequiredFw(x) && shouldBanRecomputation(g_, info_, x, options_)) ban(x);
    const int64_t weight = n.value == ValueKind::Tensor
                               ? nodeWeight(g_, info_, x, options_.treatParametersAsFreeToSave)
                               : detail::kInfinite;
    edge(FN::in(x), FN::out(x), weight);
    for (NodeId u : n.users)
      if (g_.node(u).kind != NodeKind::Output) edge(FN::out(x), FN::in(u), detail::kInfinite);
  }

  // find_first_unfusible: walk forward users by fw_order; the first node reached through an
  // unfusible step ends the walk. The queue never holds the same (order, flag) twice.
  int32_t firstUnfusible(const std::vector<NodeId>& starts, int32_t maxRange) const {
    std::set<std::pair<int32_t, bool>> queue;  // (fw_order, reached through fusible steps)
    for (NodeId s : starts) queue.insert({info_.order(s), true});
    while (!queue.empty()) {
      const auto [order, fusible] = *queue.begin();
      queue.erase(queue.begin());
      if (!fusible) return order;
      const NodeId node = orderToNode_[ix(order)];
      for (NodeId u : g_.node(node).users) {
        if (!info_.isRequiredFw(u) || info_.order(u) > maxRange) continue;
        queue.insert({info_.order(u), isFusible(g_.node(node), g_.node(u))});
      }
    }
    return maxRange;
  }

  void banUsedFarApart() {
    for (NodeId x = 0; x < g_.size(); ++x)
      if (info_.isRequiredFw(x)) orderToNode_.push_back(x);
    for (NodeId used : orderToNode_) {
      std::vector<NodeId> fwUsers;
      int32_t maxOrder = -1;
      for (NodeId u : g_.node(used).users) {
        if (!info_.isRequiredFw(u)) continue;
        fwUsers.push_back(u);
        maxOrder = std::max(maxOrder, info_.order(u));
      }
      if (fwUsers.empty()) continue;
      const int32_t first = firstUnfusible(fwUsers, maxOrder);
      for (NodeId u : fwUsers)
        if (info_.order(u) > first && isFusible(g_.node(used), g_.node(u)) && !net_.isBanned[ix(u)])
          ban(u);
    }
  }

  void banLongFusibleChains() {
    std::vector<char> visited(ix(g_.size()), 0);
    using Entry = std::pair<int32_t, NodeId>;
    for (NodeId start = 0; start < g_.size(); ++start) {
      if (!info_.isRequiredFw(start)) continue;
      const int32_t startOrder = info_.order(start);
      std::priority_queue<Entry, std::vector<Entry>, std::greater<>> fusible;
      fusible.push({startOrder, start});
      while (!fusible.empty()) {
        const NodeId cur = fusible.top().second;
        fusible.pop();
        if (visited[ix(cur)]) continue;
        visited[ix(cur)] = 1;
        if (info_.order(cur) > startOrder + 100 && fusible.empty()) {
          ban(cur);
          break;
        }
        for (NodeId u : g_.node(cur).users)
          if (info_.isRequiredFw(u) && isFusible(g_.node(cur), g_.node(u)) && !net_.isBanned[ix(u)])
            fusible.push({info_.order(u), u});
      }
    }
  }

  const JointGraph& g_;
  const NodeInfo& info_;
  const MinCutOptions& options_;
  std::vector<char> dontBan_;
  std::vector<NodeId> orderToNode_;
  detail::FlowNetwork net_;
};

}  // namespace

int64_t nodeWeight(const JointGraph& g, const NodeInfo& info, NodeId x, bool parametersFree) {
  const Node& n = g.node(x);
  if (parametersFree && n.staticParameter) return 0;
  const int64_t e = std::max<int64_t>(std::min<int64_t>(info.dist(x), 100), 1);
  const auto w =
      static_cast<int64_t>(static_cast<double>(n.bytes) * std::pow(1.1, static_cast<double>(e)));
  return isMaterialized(g, x) ? w : 2 * w;
}

bool shouldBanRecomputation(const JointGraph& g, const NodeInfo& info, NodeId x,
                            const MinCutOptions& options) {
  const Node& n = g.node(x);
  if (n.kind != NodeKind::CallFunction || n.op == "getitem") return false;
  if (n.op == "lift_fresh_copy" || n.op == "lift_fresh") return false;
  if (options.banIfNotInAllowlist) {
    if (!isRecomputable(n)) return true;
  } else if (isRandom(n) || isComputeIntensive(n)) {
    return true;
  }
  if (options.banIfMaterializedBackward && isMaterializedBackwards(g, info, x)) return true;
  const int64_t dist = info.dist(x);
  if (dist < 1000 && dist > options.maxDistFromBw) return true;
  if (options.banIfReduction) {
    int64_t inputBytes = 0;
    for (NodeId a : n.args) inputBytes += g.node(a).bytes;
    return n.bytes * 4 < inputBytes;
  }
  return false;
}

namespace detail {

FlowNetwork buildNetwork(const JointGraph& g, const NodeInfo& info, const MinCutOptions& options,
                         std::span<const NodeId> dontBan) {
  return NetworkBuilder(g, info, options, dontBan).build();
}

}  // namespace detail

}  // namespace matmulviz::partitioner
