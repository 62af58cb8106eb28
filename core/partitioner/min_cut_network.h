#pragma once
// Internal to min_cut.cpp and min_cut_network.cpp: the flow network solve_min_cut builds, before
// the infinite capacities get a value.

#include "core/partitioner/min_cut.h"

#include <cstdint>
#include <span>
#include <vector>

namespace matmulviz::partitioner::detail {

inline constexpr int64_t kInfinite = -1;  // an infinite capacity, until the solver sizes it

struct FlowEdge {
  int32_t from, to;
  int64_t capacity;  ///< >= 0, or kInfinite
};

struct FlowNetwork {
  static constexpr int32_t kSource = 0, kSink = 1;
  static int32_t in(NodeId n) { return 2 + 2 * n; }
  static int32_t out(NodeId n) { return 3 + 2 * n; }
  int32_t vertexCount = 2;
  std::vector<FlowEdge> edges;
  std::vector<NodeId> banned;  ///< insertion order
  std::vector<char> isBanned;  ///< per node id
};

/// The network of solve_min_cut with all its bans (min_cut.h describes it).
FlowNetwork buildNetwork(const JointGraph& g, const NodeInfo& info, const MinCutOptions& options,
                         std::span<const NodeId> dontBan);

}  // namespace matmulviz::partitioner::detail
