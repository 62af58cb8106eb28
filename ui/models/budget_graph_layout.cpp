#include "ui/models/budget_graph_layout.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace matmulviz::ui {

using partitioner::JointGraph;
using partitioner::NodeId;

namespace {

struct Item {
  int layer = 0;
  double y = 0, size = 1;  ///< size: 1 for a node, 0.4 for a waypoint
  QVector<int> preds, succs;
};

constexpr double kWaypointSize = 0.4;
constexpr int kSweeps = 4;

double meanY(const QVector<Item>& items, const QVector<int>& of, double fallback) {
  if (of.isEmpty()) return fallback;
  double sum = 0;
  for (int i : of) sum += items[i].y;
  return sum / of.size();
}

// Orders one layer by the wanted positions and places its items as near to them as their sizes
// allow, keeping that order: pushed down from the top, then the block shifted by the mean miss.
void placeLayer(QVector<Item>& items, QVector<int>& layer, const QVector<double>& want) {
  QVector<int> order(layer.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return want[a] < want[b]; });
  QVector<int> sorted;
  double miss = 0, prevY = 0, prevSize = 0;
  for (int k = 0; k < order.size(); ++k) {
    Item& it = items[layer[order[k]]];
    const double lowest = k == 0 ? want[order[k]] : prevY + (prevSize + it.size) / 2;
    it.y = std::max(want[order[k]], lowest);
    miss += want[order[k]] - it.y;
    prevY = it.y;
    prevSize = it.size;
    sorted << layer[order[k]];
  }
  for (int i : sorted) items[i].y += miss / sorted.size();
  layer = sorted;
}

void sweep(QVector<Item>& items, QVector<QVector<int>>& layers, bool down) {
  const int n = layers.size();
  for (int k = 1; k < n; ++k) {
    QVector<int>& layer = layers[down ? k : n - 1 - k];
    QVector<double> want;
    for (int i : layer) want << meanY(items, down ? items[i].preds : items[i].succs, items[i].y);
    placeLayer(items, layer, want);
  }
}

// Layer of every place: the longest path from the sources; a source (no drawn argument) one
// layer before its first user that leads on (a weight beside its matmul, not beside its
// transpose, which only the backward reads); then every node after all its arguments.
QVector<int> assignLayers(const QVector<Item>& items) {
  QVector<int> layer(items.size(), 1);
  for (int i = 0; i < items.size(); ++i)
    for (int p : items[i].preds)
      if (!items[p].preds.isEmpty()) layer[i] = std::max(layer[i], layer[p] + 1);
  for (int i = 0; i < items.size(); ++i) {
    if (!items[i].preds.isEmpty()) continue;
    int first = 1 << 30, firstAny = 1 << 30;
    for (int s : items[i].succs) {
      firstAny = std::min(firstAny, layer[s]);
      if (!items[s].succs.isEmpty()) first = std::min(first, layer[s]);
    }
    if (first == 1 << 30) first = firstAny;
    layer[i] = items[i].succs.isEmpty() ? 0 : std::max(0, first - 1);
  }
  for (int i = 0; i < items.size(); ++i) {
    if (items[i].preds.isEmpty()) continue;
    const bool onlySources = std::all_of(items[i].preds.begin(), items[i].preds.end(),
                                         [&](int p) { return items[p].preds.isEmpty(); });
    if (onlySources && items[i].succs.isEmpty()) layer[i] = 0;  // beside its sources
    for (int p : items[i].preds) layer[i] = std::max(layer[i], layer[p] + 1);
  }
  const int lowest = items.isEmpty() ? 0 : *std::min_element(layer.begin(), layer.end());
  for (int& l : layer) l -= lowest;
  return layer;
}

// A long edge's waypoints on one level where that level is free in every layer it crosses (its
// lowest, its middle or its highest waypoint's level, tried in that order, else just below
// everything in those layers): a straight line under or over the boxes rather than a zigzag.
void straighten(QVector<Item>& items, const QVector<QVector<int>>& layers,
                const QVector<QVector<int>>& chains) {
  for (const QVector<int>& chain : chains) {
    if (chain.size() < 2) continue;
    QVector<double> ys;
    for (int w : chain) ys << items[w].y;
    std::sort(ys.begin(), ys.end());
    double below = ys.back();
    for (int w : chain)
      for (int other : layers[items[w].layer])
        if (other != w)
          below = std::max(below, items[other].y + (items[other].size + kWaypointSize) / 2);
    for (double level : {ys.back(), ys[ys.size() / 2], ys.front(), below}) {
      bool free = true;
      for (int w : chain)
        for (int other : layers[items[w].layer])
          if (other != w &&
              std::abs(items[other].y - level) < (items[other].size + kWaypointSize) / 2)
            free = false;
      if (!free) continue;
      for (int w : chain) items[w].y = level;
      break;
    }
  }
}

// An edge over several layers becomes a chain through one waypoint item per layer crossed;
// returns each edge's chain (empty for an edge between neighbouring layers).
QVector<QVector<int>> addWaypoints(QVector<Item>& items, const QVector<GraphLayout::Edge>& edges,
                                   const QVector<int>& layer) {
  QVector<QVector<int>> chains(edges.size());
  for (int e = 0; e < edges.size(); ++e) {
    const int from = edges[e].from, to = edges[e].to;
    if (layer[to] - layer[from] <= 1) continue;
    items[to].preds.removeOne(from);
    items[from].succs.removeOne(to);
    int prev = from;
    for (int l = layer[from] + 1; l < layer[to]; ++l) {
      Item w;
      w.layer = l;
      w.size = kWaypointSize;
      w.preds << prev;
      items.append(w);
      items[prev].succs << items.size() - 1;
      chains[e] << items.size() - 1;
      prev = items.size() - 1;
    }
    items[prev].succs << to;
    items[to].preds << prev;
  }
  return chains;
}

}  // namespace

int GraphLayout::indexOf(NodeId node) const {
  for (int i = 0; i < places.size(); ++i)
    if (places[i].node == node) return i;
  return -1;
}

GraphLayout layoutGraph(const JointGraph& graph, const QVector<NodeId>& nodes) {
  GraphLayout out;
  std::vector<int> place(static_cast<size_t>(graph.size()), -1);
  for (int i = 0; i < nodes.size(); ++i) place[static_cast<size_t>(nodes[i])] = i;
  QVector<Item> items(nodes.size());
  for (int i = 0; i < nodes.size(); ++i) {
    const partitioner::Node& node = graph.node(nodes[i]);
    for (const auto* list : {&node.args, &node.nestedArgs})
      for (NodeId a : *list) {
        const int p = place[static_cast<size_t>(a)];
        if (p < 0 || items[i].preds.contains(p)) continue;
        items[i].preds << p;
        items[p].succs << i;
        out.edges.append({p, i, {}});
      }
  }
  const QVector<int> layer = assignLayers(items);
  for (int i = 0; i < items.size(); ++i) items[i].layer = layer[i];
  const QVector<QVector<int>> chains = addWaypoints(items, out.edges, layer);
  out.layers = nodes.isEmpty() ? 0 : *std::max_element(layer.begin(), layer.end()) + 1;
  QVector<QVector<int>> layers(out.layers);
  for (int i = 0; i < items.size(); ++i) {
    items[i].y = layers[items[i].layer].size();
    layers[items[i].layer] << i;
  }
  for (int s = 0; s < kSweeps; ++s) {
    sweep(items, layers, true);
    sweep(items, layers, false);
  }
  sweep(items, layers, true);
  straighten(items, layers, chains);
  double top = 0, bottom = 0;
  for (const Item& it : items) top = std::min(top, it.y), bottom = std::max(bottom, it.y);
  for (int i = 0; i < nodes.size(); ++i)
    out.places.append({nodes[i], items[i].layer, items[i].y - top});
  for (int e = 0; e < out.edges.size(); ++e)
    for (int w : chains[e]) out.edges[e].via << QPointF(items[w].layer, items[w].y - top);
  out.height = bottom - top + 1;
  return out;
}

}  // namespace matmulviz::ui
