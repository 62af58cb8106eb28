#include "ui/charts/budget_frontier_chart.h"
#include "core/util/format_units.h"

#include "ui/models/budget_frontier_model.h"
#include "ui/models/strategies_table_model.h"  // csvField

#include <qcustomplot.h>

#include <QMouseEvent>

#include <algorithm>
#include <cmath>

namespace matmulviz::ui {

namespace {

constexpr double kGiga = 1e9;

// Grey: a plan drawn but not on the frontier.
QColor dominatedColor() {
  return QColor(140, 140, 140);
}

}  // namespace

BudgetFrontierChart::BudgetFrontierChart(QWidget* parent) : ChartView(parent) {
  connect(plot(), &QCustomPlot::afterLayout, this, &BudgetFrontierChart::placeLabels);
  rebuild();
}

// Once the pixels are known: a label that would leave the axis rect goes to the left of its
// point; one that would cover the legend or an earlier label (the current plan's first) is
// hidden, its budgets stay in the point's tooltip.
void BudgetFrontierChart::placeLabels() {
  const QRect area = plot()->axisRect()->rect();
  const QRectF legend = plot()->legend->visible() ? QRectF(plot()->legend->outerRect()) : QRectF();
  QVector<QRectF> taken;
  auto rectOf = [](QCPItemText* t) {
    return QRectF(t->topLeft->pixelPosition(), t->bottomRight->pixelPosition());
  };
  QVector<QCPItemText*> order = labels_;
  const int current = model_ ? model_->currentRow() : -1;
  if (current >= 0 && current < order.size()) order.move(current, 0);
  for (QCPItemText* t : order) {
    t->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
    t->setPadding(QMargins(6, 0, 0, 5));
    if (!QRectF(area).contains(rectOf(t))) {
      t->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
      t->setPadding(QMargins(0, 0, 6, 5));
    }
    const QRectF r = rectOf(t);
    bool free = QRectF(area).contains(r) && !r.intersects(legend);
    for (const QRectF& other : taken) free = free && !r.intersects(other);
    t->setVisible(free);
    if (free) taken << r;
  }
}

void BudgetFrontierChart::setModel(const BudgetFrontierModel* model) {
  disconnect(resetConn_);
  disconnect(dataConn_);
  model_ = model;
  if (model) {
    resetConn_ = connect(model, &QAbstractItemModel::modelReset, this, [this] { rebuild(); });
    dataConn_ = connect(model, &QAbstractItemModel::dataChanged, this, [this] { rebuild(); });
  }
  rebuild();
}

QPointF BudgetFrontierChart::pointPixel(int row) const {
  if (!model_ || row < 0 || row >= model_->rowCount()) return {};
  const FrontierPoint& p = model_->point(row);
  return {plot()->xAxis->coordToPixel(p.activationBytes / kMiB),
          plot()->yAxis->coordToPixel(p.recomputeFlops / kGiga)};
}

int BudgetFrontierChart::rowAt(const QPointF& pos, double radius) const {
  int best = -1;
  double bestDistance = radius;
  for (int r = 0; model_ && r < model_->rowCount(); ++r) {
    const double d = std::hypot(pointPixel(r).x() - pos.x(), pointPixel(r).y() - pos.y());
    if (d <= bestDistance) best = r, bestDistance = d;
  }
  return best;
}

bool BudgetFrontierChart::eventFilter(QObject* watched, QEvent* event) {
  if (watched == plot() && event->type() == QEvent::MouseButtonRelease) {
    auto* mouse = static_cast<QMouseEvent*>(event);
    const int row = mouse->button() == Qt::LeftButton ? rowAt(mouse->position()) : -1;
    if (row >= 0) emit budgetClicked(model_->point(row).budgetLo);
  }
  return ChartView::eventFilter(watched, event);
}

QString BudgetFrontierChart::toolTipAt(const QPoint& pos) const {
  const int row = rowAt(pos);
  return row >= 0 ? model_->toolTip(row) : QString();
}

void BudgetFrontierChart::setupAxes() {
  QCustomPlot* p = plot();
  if (p->plotLayout()->rowCount() == 1) {
    p->plotLayout()->insertRow(0);
    p->plotLayout()->addElement(0, 0, new QCPTextElement(p, QString()));
    p->plotLayout()->setRowStretchFactor(0, 0.01);
  }
  // Classroom mode's larger fonts get the short labels.
  const bool big = presentationMode();
  p->xAxis->setLabel(big ? QStringLiteral("activations saved (MiB)")
                         : QStringLiteral("activation memory saved for the backward (MiB)"));
  p->yAxis->setLabel(big ? QStringLiteral("recomputed (GFLOP)")
                         : QStringLiteral("extra backward work: recomputation (GFLOP)"));
  auto* title = titleElement(10);
  title->setText(big ? QStringLiteral("Pareto frontier (click a plan)")
                     : QStringLiteral("Pareto frontier: one point per distinct plan (click to "
                                      "choose)"));
  p->legend->setVisible(true);
  p->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
}

void BudgetFrontierChart::addPoints() {
  QCustomPlot* p = plot();
  const int n = model_->rowCount();
  QVector<double> x, y;
  QVector<double> frontX, frontY, domX, domY;  // on the frontier, dominated
  for (int r = 0; r < n; ++r) {
    x << model_->point(r).activationBytes / kMiB;
    y << model_->point(r).recomputeFlops / kGiga;
    (model_->isDominated(r) ? domX : frontX) << x.back();
    (model_->isDominated(r) ? domY : frontY) << y.back();
  }
  QCPGraph* g = p->addGraph();
  g->setName(QStringLiteral("plans on the frontier"));
  g->setPen(QPen(seriesColor(0), lineWidth()));
  g->setLineStyle(QCPGraph::lsNone);
  g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, seriesColor(0), 9));
  g->setData(frontX, frontY);
  if (!domX.isEmpty()) {
    // Hollow and grey, outside the frontier's line: another plan saves no more memory and
    // recomputes no more.
    QCPGraph* d = p->addGraph();
    d->setName(presentationMode() ? QStringLiteral("dominated plans")
                                  : QStringLiteral("dominated plans (another saves and "
                                                   "recomputes no more)"));
    d->setLineStyle(QCPGraph::lsNone);
    d->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle,
                                       QPen(dominatedColor(), presentationMode() ? 2.5 : 1.5),
                                       Qt::NoBrush, 9));
    d->setData(domX, domY);
  }
  // The frontier's plans joined in memory order: the frontier's shape.
  QVector<int> order;
  for (int r = 0; r < n; ++r)
    if (!model_->isDominated(r)) order << r;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return x[a] < x[b]; });
  auto* curve = new QCPCurve(p->xAxis, p->yAxis);
  curve->setName(QStringLiteral("frontier"));
  curve->setPen(QPen(seriesColor(0), 1, Qt::DashLine));
  curve->removeFromLegend();
  for (int k = 0; k < order.size(); ++k) curve->addData(k, x[order[k]], y[order[k]]);
  QFont small = font();
  small.setPointSize(fontPointSize(8));
  for (int r = 0; r < n; ++r) {
    auto* label = new QCPItemText(p);
    label->position->setCoords(x[r], y[r]);
    label->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
    label->setPadding(QMargins(6, 0, 0, 5));
    label->setClipToAxisRect(false);
    label->setFont(small);
    label->setColor(model_->isDominated(r) ? dominatedColor() : QColor(60, 60, 60));
    label->setText(QStringLiteral("b ") + budgetRangeText(model_->point(r)));
    labels_ << label;
  }
  const int current = model_->currentRow();
  if (current >= 0) {
    QCPGraph* c = p->addGraph();
    c->setName(
        QStringLiteral("current plan (budget %1)").arg(budgetRangeText(model_->point(current))));
    c->setLineStyle(QCPGraph::lsNone);
    c->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle,
                                       QPen(seriesColor(5), presentationMode() ? 4 : 2.5),
                                       Qt::NoBrush, 20));
    c->setData({x[current]}, {y[current]});
  }
  const auto [xlo, xhi] = std::minmax_element(x.begin(), x.end());
  const auto [ylo, yhi] = std::minmax_element(y.begin(), y.end());
  const double dx = std::max(*xhi - *xlo, 1.0), dy = std::max(*yhi - *ylo, 0.1);
  p->xAxis->setRange(std::min(0.0, *xlo) - 0.05 * dx, *xhi + 0.18 * dx);
  p->yAxis->setRange(std::min(0.0, *ylo) - 0.06 * dy, *yhi + 0.15 * dy);
}

void BudgetFrontierChart::rebuild() {
  QCustomPlot* p = plot();
  p->clearPlottables();
  p->clearItems();
  labels_.clear();
  setupAxes();
  if (model_ && model_->rowCount() > 0) {
    addPoints();
  } else {
    p->xAxis->setRange(0, 1);
    p->yAxis->setRange(0, 1);
    showPlaceholder(QStringLiteral("Choose a graph to sweep its budgets"));
  }
  applyStyle();
  p->replot(QCustomPlot::rpQueuedReplot);
}

QString BudgetFrontierChart::csv() const {
  if (!model_ || model_->rowCount() == 0) return {};
  QString out = QStringLiteral(
      "budget_from,budget_to,activation_bytes,extra_backward_flops,backward_flops,why,dominated,"
      "current\n");
  for (int r = 0; r < model_->rowCount(); ++r) {
    const FrontierPoint& p = model_->point(r);
    out += QStringLiteral("%1,%2,%3,%4,%5,%6,%7,%8\n")
               .arg(p.budgetLo)
               .arg(p.budgetHi)
               .arg(p.activationBytes)
               .arg(p.recomputeFlops)
               .arg(p.backwardFlops)
               .arg(csvField(BudgetExplorer::routeText(p.route)))
               .arg(model_->isDominated(r) ? 1 : 0)
               .arg(r == model_->currentRow() ? 1 : 0);
  }
  return out;
}

}  // namespace matmulviz::ui
