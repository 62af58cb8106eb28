// solve_min_cut's cut: maximum flow by the Boost Graph Library's push-relabel, then the minimum
// cut closest to the sink (networkx.minimum_cut's partition).
#include "core/partitioner/min_cut.h"

#include "core/partitioner/min_cut_network.h"

// GCC 12 reports a false -Wmaybe-uninitialized inside Boost's edge iterator (a boost::optional)
// once push_relabel_max_flow is inlined here.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>

#include <limits>
#include <stdexcept>

namespace matmulviz::partitioner {

namespace {

using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
using FlowGraph = boost::adjacency_list<
    boost::vecS, boost::vecS, boost::directedS, boost::no_property,
    boost::property<
        boost::edge_capacity_t, int64_t,
        boost::property<boost::edge_residual_capacity_t, int64_t,
                        boost::property<boost::edge_reverse_t, Traits::edge_descriptor>>>>;
using Edge = Traits::edge_descriptor;

// networkx's stand-in for an infinite capacity: 3 x the sum of the finite ones, or 1.
int64_t infiniteCapacity(const detail::FlowNetwork& net) {
  constexpr int64_t kLimit = std::numeric_limits<int64_t>::max() / 8;
  int64_t sum = 0;
  for (const auto& e : net.edges) {
    if (e.capacity == detail::kInfinite) continue;
    if (e.capacity > kLimit - sum)
      throw std::overflow_error("solveMinCut: capacities exceed 64-bit flow arithmetic");
    sum += e.capacity;
  }
  return sum == 0 ? 1 : 3 * sum;
}

struct Flow {
  FlowGraph graph;
  std::vector<Edge> forward;  // the network's edges, in net.edges order
  int64_t value = 0;
};

void maxFlow(const detail::FlowNetwork& net, int64_t inf, Flow& flow) {
  FlowGraph& g = flow.graph;
  g = FlowGraph(static_cast<size_t>(net.vertexCount));
  auto capacity = boost::get(boost::edge_capacity, g);
  auto reverse = boost::get(boost::edge_reverse, g);
  flow.forward.reserve(net.edges.size());
  for (const auto& e : net.edges) {
    const Edge fwd =
        boost::add_edge(static_cast<size_t>(e.from), static_cast<size_t>(e.to), g).first;
    const Edge back =
        boost::add_edge(static_cast<size_t>(e.to), static_cast<size_t>(e.from), g).first;
    capacity[fwd] = e.capacity == detail::kInfinite ? inf : e.capacity;
    capacity[back] = 0;
    reverse[fwd] = back;
    reverse[back] = fwd;
    flow.forward.push_back(fwd);
  }
  flow.value =
      boost::push_relabel_max_flow(g, detail::FlowNetwork::kSource, detail::FlowNetwork::kSink);
}

// Vertices that can reach the sink through edges with residual capacity left.
std::vector<char> sinkSide(const Flow& flow, int32_t vertexCount) {
  const FlowGraph& g = flow.graph;
  auto residual = boost::get(boost::edge_residual_capacity, g);
  std::vector<std::vector<int32_t>> into(static_cast<size_t>(vertexCount));
  for (int32_t u = 0; u < vertexCount; ++u)
    for (auto [it, end] = boost::out_edges(static_cast<size_t>(u), g); it != end; ++it)
      if (residual[*it] > 0) into[boost::target(*it, g)].push_back(u);
  std::vector<char> side(static_cast<size_t>(vertexCount), 0);
  std::vector<int32_t> pending{detail::FlowNetwork::kSink};
  side[detail::FlowNetwork::kSink] = 1;
  while (!pending.empty()) {
    const int32_t v = pending.back();
    pending.pop_back();
    for (int32_t u : into[static_cast<size_t>(v)])
      if (!side[static_cast<size_t>(u)]) {
        side[static_cast<size_t>(u)] = 1;
        pending.push_back(u);
      }
  }
  return side;
}

}  // namespace

MinCutResult solveMinCut(const JointGraph& graph, const NodeInfo& info,
                         const MinCutOptions& options, std::span<const NodeId> dontBan) {
  const detail::FlowNetwork net = detail::buildNetwork(graph, info, options, dontBan);
  const int64_t inf = infiniteCapacity(net);
  Flow flow;
  maxFlow(net, inf, flow);
  if (flow.value >= inf) throw std::runtime_error("Infinite capacity path, flow unbounded above.");
  const std::vector<char> sink = sinkSide(flow, net.vertexCount);
  MinCutResult result;
  result.banned = net.banned;
  std::vector<char> saved(static_cast<size_t>(graph.size()), 0);
  for (const auto& e : net.edges) {
    if (sink[static_cast<size_t>(e.from)] || !sink[static_cast<size_t>(e.to)]) continue;
    // Only X_in -> X_out edges are finite; a finite flow never leaves an infinite edge cut.
    if (e.capacity == detail::kInfinite || e.from + 1 != e.to || e.from < 2 || e.from % 2 != 0)
      throw std::logic_error("solveMinCut: an infinite edge crosses the minimum cut");
    const NodeId node = (e.from - 2) / 2;
    if (!saved[static_cast<size_t>(node)]) result.cutValue += e.capacity;
    saved[static_cast<size_t>(node)] = 1;
  }
  for (NodeId n = 0; n < graph.size(); ++n)
    if (saved[static_cast<size_t>(n)]) result.saved.push_back(n);
  return result;
}

}  // namespace matmulviz::partitioner

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
