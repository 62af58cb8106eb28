#include "ui/charts/budget_timeline_chart.h"

#include "core/util/format_units.h"
#include "ui/models/budget_timeline_model.h"
#include "ui/models/strategies_table_model.h"  // csvField

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace matmulviz::ui {

BudgetTimelineChart::BudgetTimelineChart(QWidget* parent) : ChartView(parent) {
  plot()->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  plot()->axisRect()->setRangeDrag(Qt::Horizontal);
  plot()->axisRect()->setRangeZoom(Qt::Horizontal);
  connect(plot()->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), plot()->xAxis2,
          qOverload<const QCPRange&>(&QCPAxis::setRange));
  rebuild();
}

void BudgetTimelineChart::setModel(const BudgetTimelineModel* model) {
  disconnect(resetConn_);
  model_ = model;
  if (model)
    resetConn_ = connect(model, &QAbstractItemModel::modelReset, this, [this] { rebuild(); });
  rebuild();
}

void BudgetTimelineChart::setupAxes() {
  QCustomPlot* p = plot();
  if (addTitleAndLegendRows()) p->legend->setWrap(2);
  p->legend->setVisible(true);
  p->xAxis->setLabel(
      presentationMode()
          ? QStringLiteral("step: forward, then backward")
          : QStringLiteral(
                "step: the forward's ops, then the backward's, in the order PyTorch runs them"));
  setIntegerTicks(p->xAxis);
  p->yAxis->setLabel(presentationMode() ? QStringLiteral("alive (MiB)")
                                        : QStringLiteral("values alive (MiB), inputs not counted"));
  auto* title = titleElement(10);
  title->setText(presentationMode()
                     ? QStringLiteral("memory, derived (not measured)")
                     : QStringLiteral("this plan's memory, derived from the graph (not measured)"));
}

void BudgetTimelineChart::addBands() {
  QCustomPlot* p = plot();
  const int n = model_->stepCount();
  QVector<double> x(n), sum(n, 0.0);
  std::iota(x.begin(), x.end(), 0.0);
  QCPGraph* below = nullptr;
  for (int b = 0; b < BudgetTimelineModel::BandCount; ++b) {
    const auto band = BudgetTimelineModel::Band(b);
    const auto& series = model_->bandSeries(band);
    for (int i = 0; i < n; ++i) sum[i] += series[i] / kMiB;
    QVector<double> y = sum;
    if (logScale())
      for (double& v : y) v = std::max(v, kLogFloorMiB);
    auto* g = p->addGraph();
    g->setName(BudgetTimelineModel::bandText(band));
    g->setLineStyle(QCPGraph::lsStepCenter);
    // The graph chart's colours: saved blue, recomputed orange.
    const int colour[] = {0, 1, presentationMode() ? 6 : 4, 2};
    QColor c = seriesColor(colour[b]);
    g->setPen(QPen(c.darker(120), 1));
    c.setAlpha(presentationMode() ? 230 : 170);
    g->setBrush(c);
    if (below) g->setChannelFillGraph(below);
    g->setData(x, y, true);
    below = g;
  }
  const double top = *std::max_element(sum.begin(), sum.end());
  p->xAxis->setRange(-0.5, n - 0.5);
  p->yAxis->setRange(logScale() ? kLogFloorMiB : 0, std::max(top * 1.3, 0.01));
}

void BudgetTimelineChart::markPhases() {
  QCustomPlot* p = plot();
  const double split = model_->forwardSteps() - 0.5;
  auto* line = new QCPItemStraightLine(p);
  line->point1->setCoords(split, 0);
  line->point2->setCoords(split, 1);
  line->setPen(QPen(QColor(80, 80, 80), 1.5, Qt::DashLine));
  // Named on the top axis, above the data, where no band or label can cover it.
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  ticker->addTick(split, QStringLiteral("forward | backward"));
  setTextTicks(p->xAxis2, ticker);
  p->xAxis2->setSubTicks(false);
  p->xAxis2->setVisible(true);
  p->xAxis2->setRange(p->xAxis->range());
  const int peak = model_->peakStep();
  const double peakMiB = model_->totalSeries()[peak] / kMiB;
  auto* arrow = new QCPItemText(p);
  arrow->position->setCoords(peak, peakMiB);
  arrow->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
  arrow->setText(QStringLiteral("peak %1 at %2")
                     .arg(QString::fromStdString(formatSize(model_->totalSeries()[peak])),
                          model_->nodeName(peak)));
  QFont f = font();
  f.setPointSize(fontPointSize(8));
  arrow->setFont(f);
  arrow->setColor(QColor(40, 40, 40));
}

void BudgetTimelineChart::rebuild() {
  QCustomPlot* p = plot();
  p->clearPlottables();
  p->clearItems();
  setupAxes();
  p->xAxis2->setVisible(false);
  if (model_ && model_->stepCount() > 0) {
    addBands();
    markPhases();
  } else {
    p->xAxis->setRange(0, 1);
    p->yAxis->setRange(0, 1);
    showPlaceholder(QStringLiteral("Choose a graph to see its plan's memory"));
  }
  setValueScale(p->yAxis, logScale());
  applyStyle();
  p->replot(QCustomPlot::rpQueuedReplot);
}

QString BudgetTimelineChart::toolTipAt(const QPoint& pos) const {
  if (!model_ || model_->stepCount() == 0 || !plot()->axisRect()->rect().contains(pos)) return {};
  const int step = static_cast<int>(std::lround(plot()->xAxis->pixelToCoord(pos.x())));
  return model_->toolTip(std::clamp(step, 0, model_->stepCount() - 1));
}

QString BudgetTimelineChart::csv() const {
  if (!model_ || model_->stepCount() == 0) return {};
  QString out = QStringLiteral(
      "step,pass,node,op,saved_bytes,recomputed_bytes,forward_bytes,backward_bytes,total_bytes\n");
  for (int s = 0; s < model_->stepCount(); ++s) {
    QStringList cells;
    for (int c = 0; c < BudgetTimelineModel::ColumnCount; ++c)
      cells << csvField(model_->data(model_->index(s, c), BudgetTimelineModel::RawRole).toString());
    out += cells.join(QLatin1Char(',')) + QLatin1Char('\n');
  }
  return out;
}

}  // namespace matmulviz::ui
