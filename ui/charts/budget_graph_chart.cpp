#include "ui/charts/budget_graph_chart.h"

#include "core/util/format_units.h"
#include "ui/models/budget_nodes_model.h"
#include "ui/models/strategies_table_model.h"  // csvField

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace matmulviz::ui {

using partitioner::NodeKind;

namespace {

constexpr int kRoles = 7;

/// Names as FX writes them, shortened for a box: "_scaled_dot_product_efficient_attention_1"
/// -> "sdpa_efficient_1"; anything longer than 18 characters elided in the middle.
QString shortName(QString s) {
  s.replace(QStringLiteral("_scaled_dot_product_efficient_attention"),
            QStringLiteral("sdpa_efficient"));
  s.replace(QStringLiteral("scaled_dot_product_efficient_attention"),
            QStringLiteral("sdpa_efficient"));
  if (s.size() > 18) s = s.left(8) + QChar(0x2026) + s.right(9);
  return s;
}

QColor border(NodeRole role, bool presentation) {
  switch (role) {
    case NodeRole::Saved:
    case NodeRole::SavedView:
      return QColor(0, 70, 120);
    case NodeRole::Recomputed:
      return QColor(160, 90, 0);
    case NodeRole::BackwardOnly:
      return QColor(200, 120, 0);
    default:
      return presentation ? Qt::black : QColor(90, 90, 90);
  }
}

}  // namespace

BudgetGraphChart::BudgetGraphChart(QWidget* parent) : ChartView(parent) {
  plot()->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  rebuild();
}

void BudgetGraphChart::setModel(const BudgetNodesModel* model) {
  disconnect(resetConn_);
  disconnect(dataConn_);
  model_ = model;
  if (model) {
    resetConn_ = connect(model, &QAbstractItemModel::modelReset, this, [this] { rebuild(); });
    dataConn_ = connect(model, &QAbstractItemModel::dataChanged, this, [this] { recolour(); });
  }
  rebuild();
}

QColor BudgetGraphChart::roleColor(NodeRole role) const {
  switch (role) {
    case NodeRole::Input:
      return QColor(200, 236, 220);
    case NodeRole::Parameter:
      return QColor(222, 222, 222);
    case NodeRole::Saved:
      return seriesColor(0);  // blue
    case NodeRole::SavedView:
      return QColor(190, 220, 240);  // pale blue: saved, but free
    case NodeRole::Recomputed:
      return seriesColor(1);  // orange
    case NodeRole::BackwardOnly:
      return QColor(253, 226, 178);
    case NodeRole::ForwardOnly:
      return Qt::white;
  }
  return Qt::white;
}

QColor BudgetGraphChart::nodeFill(int row) const {
  return row >= 0 && row < boxes_.size() ? boxes_[row]->brush().color() : QColor();
}

QVector<QRectF> BudgetGraphChart::nodeRects() const {
  QVector<QRectF> out;
  for (QCPItemText* b : boxes_)
    out << QRectF(b->topLeft->pixelPosition(), b->bottomRight->pixelPosition());
  return out;
}

QVector<QRectF> BudgetGraphChart::labelRects() const {
  QVector<QRectF> out;
  for (QCPItemText* l : labels_)
    out << QRectF(l->topLeft->pixelPosition(), l->bottomRight->pixelPosition());
  return out;
}

QString BudgetGraphChart::boxText(int row) const {
  const partitioner::Node& n = model_->explorer()->graph()->node(model_->nodeAt(row));
  const QString op =
      n.kind == NodeKind::Primal ? nodeRoleText(model_->roleAt(row)) : QString::fromStdString(n.op);
  return shortName(QString::fromStdString(n.name)) + QLatin1Char('\n') + shortName(op);
}

QSizeF BudgetGraphChart::cellPixels() const {
  QFont box = font(), label = font();
  box.setPointSize(fontPointSize(8));
  label.setPointSize(fontPointSize(7));
  const QFontMetrics fb(box), fl(label);
  int boxW = 40, labelW = 20;
  const int rows = model_ ? model_->rowCount() : 0;
  for (int r = 0; r < rows; ++r) {
    for (const QString& line : boxText(r).split(QLatin1Char('\n')))
      boxW = std::max(boxW, fb.horizontalAdvance(line));
    labelW = std::max(
        labelW,
        fl.horizontalAdvance(model_->data(model_->index(r, BudgetNodesModel::Bytes)).toString()));
  }
  return {double(boxW + 10 + labelW + 10), double(2 * fb.lineSpacing() + 8 + 16)};
}

// Pixels above and below the axis rect: the title and the legend's rows (two, three in
// classroom mode), with their margins.
int BudgetGraphChart::chromePixels() const {
  QFont title = font(), legend = font();
  title.setPointSize(fontPointSize(10));
  title.setBold(true);
  legend.setPointSize(fontPointSize(9));
  const int rows = presentationMode() ? 3 : 2;
  return QFontMetrics(title).height() + 10 + rows * (QFontMetrics(legend).height() + 8) + 16;
}

QSize BudgetGraphChart::preferredExportSize() const {
  const QSizeF cell = cellPixels();
  const QSize fit(int(cell.width() * layout_.layers) + 40,
                  int(cell.height() * layout_.height) + chromePixels() + 40);
  return fit.expandedTo(defaultExportSize());
}

void BudgetGraphChart::fitTo(QSize size) {
  resize(size);
  fitRanges();
}

void BudgetGraphChart::resizeEvent(QResizeEvent* event) {
  ChartView::resizeEvent(event);
  fitRanges();
  plot()->replot(QCustomPlot::rpQueuedReplot);
}

void BudgetGraphChart::setupFrame() {
  QCustomPlot* p = plot();
  addTitleAndLegendRows();
  // Two rows (three in classroom mode's larger font): one row of seven would make the window
  // wider than a 1600-pixel screen beside the scenario panel.
  p->legend->setWrap(presentationMode() ? 3 : (kRoles + 1) / 2);
  p->legend->setVisible(true);
  for (QCPAxis* a : {p->xAxis, p->yAxis}) {
    a->setVisible(false);
    a->grid()->setVisible(false);
  }
  p->yAxis->setRangeReversed(true);
  p->axisRect()->setAutoMargins(QCP::msNone);
  p->axisRect()->setMargins(QMargins(8, 4, 8, 4));
  setTitle();
}

void BudgetGraphChart::setTitle() {
  QCustomPlot* p = plot();
  if (p->plotLayout()->rowCount() < 2) return;
  auto* title = titleElement(10);
  const BudgetExplorer* e = model_ ? model_->explorer() : nullptr;
  title->setText(e && e->hasGraph()
                     ? QStringLiteral("forward graph at budget %1%2")
                           .arg(e->budget(), 0, 'f', 2)
                           .arg(presentationMode()
                                    ? QString()
                                    : QStringLiteral(": boxes are ops, arrows are tensors "
                                                     "with their sizes, colours are the plan"))
                     : QStringLiteral("forward graph (choose a graph)"));
  if (clipped_) title->setText(title->text() + QStringLiteral(" (drag to see the rest)"));
}

void BudgetGraphChart::addLegend() {
  for (int r = 0; r < kRoles; ++r) {
    const auto role = static_cast<NodeRole>(r);
    QCPGraph* g = plot()->addGraph();
    g->setName(nodeRoleText(role));
    g->setLineStyle(QCPGraph::lsNone);
    g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssSquare,
                                       QPen(border(role, presentationMode()), 1.5), roleColor(role),
                                       13));
  }
}

void BudgetGraphChart::addEdges() {
  const QPen pen(QColor(110, 110, 110), presentationMode() ? 2 : 1.2);
  for (const GraphLayout::Edge& e : layout_.edges) {
    QVector<QPointF> points = e.via;
    for (int k = 0; k <= points.size(); ++k) {
      auto* line = new QCPItemLine(plot());
      line->setPen(pen);
      if (k == 0) {
        line->start->setType(QCPItemPosition::ptAbsolute);
        line->start->setParentAnchor(boxes_[e.from]->right);
        line->start->setCoords(0, 0);
      } else {
        line->start->setCoords(points[k - 1]);
      }
      if (k == points.size()) {
        line->end->setType(QCPItemPosition::ptAbsolute);
        line->end->setParentAnchor(boxes_[e.to]->left);
        line->end->setCoords(0, 0);
        line->setHead(QCPLineEnding(QCPLineEnding::esSpikeArrow, 7, 9));
      } else {
        line->end->setCoords(points[k]);
      }
    }
  }
}

// Boxes, then one size label per node on its straightest outgoing edge; both above the edges.
void BudgetGraphChart::addNodes() {
  QCustomPlot* p = plot();
  if (!p->layer(QStringLiteral("boxes")))
    p->addLayer(QStringLiteral("boxes"), p->layer(QStringLiteral("main")), QCustomPlot::limAbove);
  QFont boxFont = font(), labelFont = font();
  boxFont.setPointSize(fontPointSize(8));
  labelFont.setPointSize(fontPointSize(7));
  QVector<int> straightest(layout_.places.size(), -1);
  for (int k = 0; k < layout_.edges.size(); ++k) {
    const GraphLayout::Edge& e = layout_.edges[k];
    auto firstDy = [&](const GraphLayout::Edge& x) {
      const double next = x.via.isEmpty() ? layout_.places[x.to].y : x.via.front().y();
      return std::abs(next - layout_.places[x.from].y);
    };
    int& best = straightest[e.from];
    if (best < 0 || firstDy(e) < firstDy(layout_.edges[best])) best = k;
  }
  for (int r = 0; r < layout_.places.size(); ++r) {
    const GraphLayout::Place& place = layout_.places[r];
    const int e = straightest[r];
    if (e < 0) continue;
    const GraphLayout::Edge& edge = layout_.edges[e];
    const QPointF next = edge.via.isEmpty()
                             ? QPointF(layout_.places[edge.to].layer, layout_.places[edge.to].y)
                             : edge.via.front();
    auto* label = new QCPItemText(p);
    label->setLayer(QStringLiteral("boxes"));
    label->position->setCoords((place.layer + next.x()) / 2, (place.y + next.y()) / 2);
    label->setFont(labelFont);
    label->setColor(QColor(50, 50, 50));
    label->setBrush(Qt::white);
    label->setPadding(QMargins(1, 0, 1, 0));
    label->setText(model_->data(model_->index(r, BudgetNodesModel::Bytes)).toString());
    labels_ << label;
  }
  for (int r = 0; r < layout_.places.size(); ++r) {
    auto* box = new QCPItemText(p);
    box->setLayer(QStringLiteral("boxes"));
    box->position->setCoords(layout_.places[r].layer, layout_.places[r].y);
    box->setFont(boxFont);
    box->setText(boxText(r));
    box->setPadding(QMargins(5, 3, 5, 3));
    boxes_ << box;
  }
  styleBoxes();
}

void BudgetGraphChart::styleBoxes() {
  for (int r = 0; r < boxes_.size(); ++r) {
    const NodeRole role = model_->roleAt(r);
    const bool primal = role == NodeRole::Input || role == NodeRole::Parameter;
    const bool dashed = role == NodeRole::Parameter || role == NodeRole::BackwardOnly;
    boxes_[r]->setPen(QPen(border(role, presentationMode()), primal ? 2 : 1.2,
                           dashed ? Qt::DashLine : Qt::SolidLine));
    boxes_[r]->setBrush(roleColor(role));
    boxes_[r]->setColor(role == NodeRole::Saved ? Qt::white : Qt::black);
  }
}

// A new plan for the same graph: colours and title change, the layout and the pan stay.
void BudgetGraphChart::recolour() {
  if (!model_ || boxes_.size() != model_->rowCount()) return rebuild();
  setupFrame();
  styleBoxes();
  plot()->replot(QCustomPlot::rpQueuedReplot);
}

void BudgetGraphChart::fitRanges() {
  QCustomPlot* p = plot();
  const QSizeF cell = cellPixels();
  const double w = std::max(100, width() - 16), h = std::max(100, height() - chromePixels());
  const double cols = std::max(1.0, std::floor(w / cell.width()));
  const double rows = std::max(1.0, std::floor(h / cell.height()));
  const double layers = std::max(1, layout_.layers), height = std::max(1.0, layout_.height);
  p->xAxis->setRange(-0.5, std::min(layers, cols) - 0.5);
  p->yAxis->setRange(-0.5, std::min(height, rows) - 0.5);
  clipped_ = cols < layers || rows < height;
  setTitle();
}

void BudgetGraphChart::rebuild() {
  QCustomPlot* p = plot();
  p->clearPlottables();
  p->clearItems();
  boxes_.clear();
  labels_.clear();
  applyStyle();
  setupFrame();
  addLegend();
  const BudgetExplorer* e = model_ ? model_->explorer() : nullptr;
  if (e && e->hasGraph() && model_->rowCount() > 0) {
    layout_ = layoutGraph(*e->graph(), e->forwardNodes());
    addNodes();
    addEdges();
  } else {
    layout_ = {};
    showPlaceholder(QStringLiteral("Choose a graph to see how its forward is planned"));
  }
  fitRanges();
  p->replot(QCustomPlot::rpQueuedReplot);
}

QString BudgetGraphChart::toolTipAt(const QPoint& pos) const {
  const QVector<QRectF> rects = nodeRects();
  for (int r = 0; r < rects.size(); ++r)
    if (rects[r].contains(pos)) return model_->toolTip(r);
  return {};
}

QString BudgetGraphChart::csv() const {
  if (!model_ || layout_.places.isEmpty()) return {};
  QString out = QStringLiteral("node,op,role,bytes,flops,layer,row\n");
  for (int r = 0; r < layout_.places.size(); ++r) {
    auto cell = [&](int c) {
      return model_->data(model_->index(r, c), BudgetNodesModel::RawRole).toString();
    };
    out += QStringLiteral("%1,%2,%3,%4,%5,%6,%7\n")
               .arg(csvField(cell(BudgetNodesModel::Name)), csvField(cell(BudgetNodesModel::Op)),
                    csvField(nodeRoleText(model_->roleAt(r))), cell(BudgetNodesModel::Bytes),
                    cell(BudgetNodesModel::Flops))
               .arg(layout_.places[r].layer)
               .arg(layout_.places[r].y, 0, 'g', 6);
  }
  return out;
}

}  // namespace matmulviz::ui
