#pragma once
// How PyTorch's partitioner classifies the nodes of a joint graph (PyTorch,
// torch/_functorch/partitioners.py, min_cut_rematerialization_partition: classify_nodes and the
// dist_from_bw loop; 2.8-era semantics):
//   inputs       primal placeholders in graph order;
//   required_bw  tangents and, scanning in graph order, every user of a member (the forward
//                closure of the tangents), then every non-None gradient output;
//   required_fw  the forward-only graph: every input, plus each node that does not depend on a
//                tangent and from which a forward output is reachable without passing a node that
//                does (the forward graph extracted from inputs to forward outputs after dead-code
//                elimination);
//   unclaimed    everything else (forward-side values only the backward uses, e.g. t(w) or cos(x)
//                for the gradient of sin(x));
//   fw_order     rank of a required_fw node among required_fw nodes in graph order;
//   dist_from_bw in reverse graph order: output node 10^9, a node that is not required_fw 0, a
//                required_fw node min(10^9, min over users of user's dist + 1).

#include "core/partitioner/joint_graph.h"

#include <cstdint>
#include <vector>

namespace matmulviz::partitioner {

inline constexpr int64_t kFarFromBackward = 1000000000;  // int(1e9)

struct NodeInfo {
  std::vector<NodeId> inputs;       ///< primals, graph order
  std::vector<char> input;          ///< per node id: one of `inputs`
  std::vector<char> requiredBw;     ///< per node id
  std::vector<char> requiredFw;     ///< per node id
  std::vector<char> unclaimed;      ///< per node id
  std::vector<int32_t> fwOrder;     ///< per node id; -1 for nodes not required_fw
  std::vector<int64_t> distFromBw;  ///< per node id
  /// Per node id: the value is computed from a tangent (it can only exist in the backward).
  std::vector<char> tangentDependent;

  bool isRequiredFw(NodeId n) const { return requiredFw[static_cast<size_t>(n)] != 0; }
  bool isRequiredBw(NodeId n) const { return requiredBw[static_cast<size_t>(n)] != 0; }
  bool isInput(NodeId n) const { return input[static_cast<size_t>(n)] != 0; }
  int32_t order(NodeId n) const { return fwOrder[static_cast<size_t>(n)]; }
  int64_t dist(NodeId n) const { return distFromBw[static_cast<size_t>(n)]; }
  bool hasBackward() const;
};

/// Classifies `graph` as described above. O(nodes + edges). Never throws for a built graph.
NodeInfo classifyNodes(const JointGraph& graph);

}  // namespace matmulviz::partitioner
