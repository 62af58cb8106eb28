#pragma once
// A layered (Sugiyama-style, simplified) layout of a set of graph nodes, left to right in graph
// order: a node's layer is one more than the largest layer of its arguments among the drawn
// nodes; a node without drawn arguments (an input, a weight) sits one layer before its first
// user, so that a weight stands next to its matmul. Within a layer nodes are ordered and placed
// by the mean position of their neighbours (a few sweeps left to right and back), at least one
// row apart. An edge that skips layers passes through a waypoint in each layer it crosses
// (a "dummy node", half a row high), so it runs between the boxes, not through them.
// Positions are in layer/row units: two nodes of one layer differ in y by at least 1, so boxes
// smaller than one unit never overlap. Plain data, no drawing.

#include "core/partitioner/joint_graph.h"

#include <QPointF>
#include <QVector>

namespace matmulviz::ui {

struct GraphLayout {
  struct Place {
    partitioner::NodeId node = partitioner::kNoNode;
    int layer = 0;  ///< x, 0 = leftmost
    double y = 0;   ///< row position, top = smallest; >= 0
  };
  QVector<Place> places;  ///< one per drawn node, in the order given
  struct Edge {
    int from = -1, to = -1;  ///< indices into `places`: the argument, its user
    QVector<QPointF> via;    ///< waypoints (layer, y) in the layers between, left to right
  };
  QVector<Edge> edges;  ///< one per (argument, user) pair among the drawn nodes
  int layers = 0;       ///< number of layers
  double height = 0;    ///< largest y + 1
  /// Index into `places` of `node`; -1 when it is not drawn.
  int indexOf(partitioner::NodeId node) const;
};

/// Lays out `nodes` (graph order, a subset of `graph`'s nodes) and the edges among them.
GraphLayout layoutGraph(const partitioner::JointGraph& graph,
                        const QVector<partitioner::NodeId>& nodes);

}  // namespace matmulviz::ui
