#pragma once
// Op classes of PyTorch's partitioner (PyTorch, torch/_functorch/partitioners.py,
// get_default_op_list and solve_min_cut's is_fusible), keyed by aten op packet name, as of the
// 2.8-era sources: recomputable (a fixed list of cheap ops, the pointwise-tagged aten ops and the
// views), view (squeeze, unsqueeze, alias, view, slice, t, broadcast_in_dim, expand, as_strided,
// permute, select, split), compute-intensive (mm, bmm, addmm, convolution, the flash/efficient
// SDPA ops, ...), random (native_dropout, rand_like, randn_like); fusible = recomputable or random.
// Only call_function nodes belong to any class. The pointwise-tagged set is the subset of aten's
// `pointwise` ops a joint graph of matmulviz's engine can contain, not all of aten's.

#include "core/partitioner/joint_graph.h"

#include <string_view>

namespace matmulviz::partitioner {

bool isRecomputableOp(std::string_view op);
bool isViewOp(std::string_view op);
bool isComputeIntensiveOp(std::string_view op);
bool isRandomOp(std::string_view op);
/// recomputable or random (OpTypes.is_fusible).
bool isFusibleOp(std::string_view op);

/// The classes applied to a node: false for placeholders and the output node.
bool isRecomputable(const Node& n);
bool isView(const Node& n);
bool isComputeIntensive(const Node& n);
bool isRandom(const Node& n);

/// solve_min_cut's is_fusible(a, b): true if b is `cat` ("memory fusion" into a cat), otherwise
/// true iff both a and b are fusible ops.
bool isFusible(const Node& a, const Node& b);

}  // namespace matmulviz::partitioner
