#pragma once
// The Budget view's graph: the forward graph of a BudgetNodesModel, laid out left to right in
// layers (layoutGraph): each node a box with its name and op, filled by its role under the
// current plan (saved, recomputed, computed only in the backward, forward only; inputs and
// parameters in their own colours; a legend names them), each tensor an arrow from the node
// that makes it to its users, labelled once with its size. Hover a box for its bytes and FLOPs.
// Columns keep a minimum width: a graph wider than the chart shows its first layers and pans
// (drag; the wheel zooms); exports use preferredExportSize(), which fits the whole graph.

#include "ui/charts/chart_view.h"
#include "ui/models/budget_explorer.h"
#include "ui/models/budget_graph_layout.h"

#include <QPointer>
#include <QRectF>
#include <QVector>

class QCPItemText;

namespace matmulviz::ui {

class BudgetNodesModel;

class BudgetGraphChart : public ChartView {
  Q_OBJECT
 public:
  explicit BudgetGraphChart(QWidget* parent = nullptr);

  /// Follows `model` (not owned): lays out again on a reset, recolours on dataChanged.
  void setModel(const BudgetNodesModel* model);
  QString chartName() const override { return QStringLiteral("budget-graph"); }
  /// node, op, role, bytes, flops, layer, row of every drawn node.
  QString csv() const override;
  bool supportsLogScale() const override { return false; }

  const GraphLayout& layout() const { return layout_; }
  /// The fill of `role`'s boxes (the legend's colour).
  QColor roleColor(NodeRole role) const;
  /// The fill of the box of model row `row` as drawn now.
  QColor nodeFill(int row) const;
  /// The boxes in pixels as last drawn (call replotNow() first), one per model row.
  QVector<QRectF> nodeRects() const;
  /// The size labels in pixels as last drawn.
  QVector<QRectF> labelRects() const;
  /// The size (pixels) at which the whole graph fits with readable boxes; at least the
  /// default export size.
  QSize preferredExportSize() const;
  /// Sizes the chart (shown or not) to `size` and fits its ranges to it: call before exporting
  /// at that size.
  void fitTo(QSize size);
  /// The tooltip the chart shows with the mouse at pixel `pos` (empty: none).
  QString hoverText(const QPoint& pos) const { return toolTipAt(pos); }

 protected:
  void rebuild() override;
  QString toolTipAt(const QPoint& pos) const override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  void setupFrame();
  void setTitle();
  void addLegend();
  void addEdges();
  void addNodes();
  void styleBoxes();
  void recolour();
  void fitRanges();
  QString boxText(int row) const;
  /// Pixels one layer and one row need (box, size label, gaps).
  QSizeF cellPixels() const;
  int chromePixels() const;

  QPointer<const BudgetNodesModel> model_;
  QMetaObject::Connection resetConn_, dataConn_;
  GraphLayout layout_;
  QVector<QCPItemText*> boxes_, labels_;
  bool clipped_ = false;  ///< the graph is larger than the chart shows
};

}  // namespace matmulviz::ui
