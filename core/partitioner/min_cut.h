#pragma once
// PyTorch's solve_min_cut (PyTorch, torch/_functorch/partitioners.py, 2.8-era semantics): a flow
// network with a source, a sink and, per node X except the output node, vertices X_in and X_out:
//   X required_bw:  X_in -> sink (inf) and nothing else, unless X is an input, which gets
//                   X_out -> sink (inf) and carries on;
//   X a primal, or required_fw and should_ban_recomputation(X): ban(X), i.e. source -> X_in (inf),
//                   unless X is a view or in dont_ban;
//   X_in -> X_out:  get_node_weight(X) for a tensor, inf for a tuple or other non-tensor value;
//   X_out -> U_in:  inf for every user U (edges into the output node are left out: that vertex
//                   has no way to the sink, so they never change the cut).
// The maximum flow comes from the Boost Graph Library (push-relabel); the cut is the minimum cut
// closest to the sink, as networkx.minimum_cut returns it: the sink side is every vertex that can
// still reach the sink in the residual network, infinite capacities stand for 3 x the sum of the
// finite ones (1 if that sum is 0), zero-capacity edges are not in the residual network. The
// saved values are the nodes whose X_in -> X_out edge goes from the source side to the sink side
// (zero-weight edges included), in graph order.

#include "core/partitioner/joint_graph.h"
#include "core/partitioner/node_info.h"

#include <cstdint>
#include <span>
#include <vector>

namespace matmulviz::partitioner {

/// MinCutOptions plus the config values solve_min_cut reads (defaults: torch._functorch.config).
struct MinCutOptions {
  bool banIfUsedFarApart = true;            ///< ban_recompute_used_far_apart
  bool banIfLongFusibleChains = true;       ///< ban_recompute_long_fusible_chains
  bool banIfMaterializedBackward = true;    ///< ban_recompute_materialized_backward
  bool banIfNotInAllowlist = true;          ///< ban_recompute_not_in_allowlist
  bool banIfReduction = true;               ///< ban_recompute_reductions
  int64_t maxDistFromBw = 1000;             ///< max_dist_from_bw (the "< 1000" hack never fires)
  bool treatParametersAsFreeToSave = true;  ///< treat_parameters_as_free_to_save
};

struct MinCutResult {
  std::vector<NodeId> saved;   ///< graph order
  std::vector<NodeId> banned;  ///< banned_nodes in insertion order (each once)
  int64_t cutValue = 0;        ///< sum of the weights of the saved nodes' in->out edges
};

/// get_node_weight: 0 for a static parameter when parameters are free to save; otherwise
/// w = trunc(bytes * 1.1^e) in double with e = max(min(dist_from_bw, 100), 1), and w if the node
/// is materialized (a placeholder, or a user is not fusible with it; no users: not materialized),
/// else 2w. Units: bytes scaled by the heuristic.
int64_t nodeWeight(const JointGraph& g, const NodeInfo& info, NodeId n, bool parametersFree);

/// should_ban_recomputation(X) for the given options (only call_function nodes, never getitem;
/// MUST_SAVE tags and recompute_views are not modelled).
bool shouldBanRecomputation(const JointGraph& g, const NodeInfo& info, NodeId n,
                            const MinCutOptions& options);

/// Builds the network for `graph` (classified as `info`), bans what `options` ban except the
/// nodes in `dontBan`, and returns the sink-closest minimum cut's saved values and the banned
/// nodes. Deterministic. Throws std::runtime_error when every cut is infinite (networkx:
/// "Infinite capacity path, flow unbounded above.") and std::overflow_error when the finite
/// capacities do not fit 64-bit arithmetic.
MinCutResult solveMinCut(const JointGraph& graph, const NodeInfo& info,
                         const MinCutOptions& options, std::span<const NodeId> dontBan = {});

}  // namespace matmulviz::partitioner
