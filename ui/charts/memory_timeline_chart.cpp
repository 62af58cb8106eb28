#include "ui/charts/memory_timeline_chart.h"

#include <QRegularExpression>

#include "ui/models/memory_timeline_model.h"
#include "ui/models/strategies_table_model.h"  // csvField

#include "core/util/format_units.h"

#include <qcustomplot.h>

#include <QFontMetrics>
#include <QMenu>
#include <QRegularExpression>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <numeric>

namespace matmulviz::ui {

MemoryTimelineChart::MemoryTimelineChart(QWidget* parent) : ChartView(parent) {
  plot()->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  plot()->axisRect()->setRangeDrag(Qt::Horizontal | Qt::Vertical);
  plot()->axisRect()->setRangeZoom(Qt::Horizontal | Qt::Vertical);
  connect(plot(), &QCustomPlot::afterLayout, this, &MemoryTimelineChart::fitPeakLabel);
  rebuild();
}

void MemoryTimelineChart::setModel(const MemoryTimelineModel* model) {
  disconnect(resetConn_);
  model_ = model;
  if (model)
    resetConn_ = connect(model, &QAbstractItemModel::modelReset, this, [this] {
      scaleToAllocated_ = scaleToAllocatedByDefault();
      rebuild();
      emit scaleToAllocatedChanged(scaleToAllocated_);
    });
  scaleToAllocated_ = scaleToAllocatedByDefault();
  rebuild();
}

bool MemoryTimelineChart::scaleToAllocatedByDefault() const {
  if (!model_ || model_->eventCount() == 0) return false;
  const auto& reserved = model_->reservedSeries();
  const qint64 top = *std::max_element(reserved.begin(), reserved.end());
  return top > 4 * model_->peakAllocatedBytes();
}

void MemoryTimelineChart::setScaleToAllocated(bool on) {
  if (on == scaleToAllocated_) return;
  scaleToAllocated_ = on;
  rebuild();
  emit scaleToAllocatedChanged(on);
}

void MemoryTimelineChart::addMenuActions(QMenu& menu) {
  QAction* scale = menu.addAction(tr("Scale to allocated"));
  scale->setCheckable(true);
  scale->setChecked(scaleToAllocated_);
  scale->setToolTip(tr("Fit the value axis to allocated memory; reserved may go above it"));
  connect(scale, &QAction::toggled, this, &MemoryTimelineChart::setScaleToAllocated);
}

QString MemoryTimelineChart::chartName() const {
  // The name is a file name: a snapshot's "cuda:0" becomes "cuda-0", a script's path its name.
  QString s = model_ ? model_->strategy() : QString();
  s.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9._-]")), QStringLiteral("-"));
  return s.isEmpty() ? QStringLiteral("memory-timeline") : QStringLiteral("memory-timeline-") + s;
}

void MemoryTimelineChart::thin() {
  plotted_.clear();
  const int n = model_ ? model_->eventCount() : 0;
  if (n <= maxPlottedEvents()) {
    plotted_.resize(n);
    std::iota(plotted_.begin(), plotted_.end(), 0);
    return;
  }
  // Each stretch keeps the event of largest allocated among it and its two neighbours (so a
  // rise and fall longer than a stretch still shows its top in every stretch: no stripes); the
  // peak, the first event at the maximum, is the first largest of its windows.
  const int buckets = maxPlottedEvents() - 2;
  const auto& allocated = model_->allocatedSeries();
  plotted_.append(0);
  for (int b = 0; b < buckets; ++b) {
    const int begin = static_cast<int>(qint64(n) * std::max(0, b - 1) / buckets);
    const int end = static_cast<int>(qint64(n) * std::min(buckets, b + 2) / buckets);
    int best = begin;
    for (int i = begin; i < end; ++i)
      if (allocated[i] > allocated[best]) best = i;
    if (best > plotted_.back()) plotted_.append(best);
  }
  if (plotted_.back() != n - 1) plotted_.append(n - 1);
}

void MemoryTimelineChart::setupAxes() {
  QCustomPlot* p = plot();
  if (addTitleAndLegendRows()) p->legend->setWrap(4);
  p->legend->setVisible(true);
  // No hover hint here: the label is part of every exported image.
  p->xAxis->setLabel(QStringLiteral("allocator event (in order)"));
  setIntegerTicks(p->xAxis);
  p->yAxis->setLabel(QStringLiteral("memory (MiB)"));
  auto* title = titleElement();
  title->setText(model_ && !model_->strategy().isEmpty()
                     ? QStringLiteral("memory timeline of %1: allocated by category, "
                                      "requested, reserved")
                           .arg(model_->strategy())
                     : QStringLiteral("memory timeline (no run recorded)"));
}

void MemoryTimelineChart::rebuild() {
  QCustomPlot* p = plot();
  p->clearPlottables();
  p->clearItems();
  setupAxes();
  thin();
  QVector<double> x(plotted_.size());
  for (int i = 0; i < plotted_.size(); ++i) x[i] = plotted_[i];
  if (!plotted_.isEmpty()) {
    addBands(x);
    addLines();
    markPeak();
    markStatementEnd();
    p->xAxis->setRange(-0.5, std::max(1.0, x.back() + 0.5));
    setValueRange();
  } else {
    p->xAxis->setRange(0, 1);
    p->yAxis->setRange(logScale() ? QCPRange(kLogFloorMiB, 1) : QCPRange(0, 1));
  }
  setValueScale(p->yAxis, logScale());
  applyStyle();
  p->replot(QCustomPlot::rpQueuedReplot);
}

namespace {

/// The categories from the bottom of the stack up: what lives for the whole run first (the
/// cuBLAS workspaces, parameters, optimizer state, inputs), what rises and falls on top, so a
/// constant band stays flat (as PyTorch's memory_viz puts the longest-lived at the bottom).
constexpr MemoryCategory kStackOrder[] = {
    MemoryCategory::CublasWorkspace, MemoryCategory::Parameter,
    MemoryCategory::OptimizerState,  MemoryCategory::Inputs,
    MemoryCategory::GatheredCopy,    MemoryCategory::Outputs,
    MemoryCategory::Other,           MemoryCategory::SavedForBackward,
    MemoryCategory::Activation,      MemoryCategory::Gradients,
    MemoryCategory::AutogradDetail,  MemoryCategory::Temporary,
};
static_assert(std::size(kStackOrder) == kMemoryCategoryCount);

}  // namespace

void MemoryTimelineChart::addBands(const QVector<double>& x) {
  QCustomPlot* p = plot();
  QVector<double> sum(x.size(), 0.0);
  QCPGraph* below = nullptr;
  for (const MemoryCategory cat : kStackOrder) {
    const int c = static_cast<int>(cat);
    const auto& series = model_->categorySeries(cat);
    bool any = false;
    for (int i = 0; i < x.size(); ++i) {
      const qint64 v = series[plotted_[i]];
      any = any || v != 0;
      sum[i] += v / kMiB;
    }
    if (!any) continue;
    QVector<double> y = sum;
    if (logScale())
      for (double& v : y) v = std::max(v, kLogFloorMiB);
    auto* g = p->addGraph();
    g->setName(QStringLiteral("allocated: ") + memoryCategoryText(cat));
    g->setLineStyle(QCPGraph::lsStepLeft);
    // The palette has 8 colours; the profiler's categories after them take darker ones.
    QColor color = c < 8 ? seriesColor(c) : seriesColor(c).darker(170);
    g->setPen(QPen(color.darker(120), 1));
    color.setAlpha(presentationMode() ? 230 : 170);
    g->setBrush(color);
    if (below) g->setChannelFillGraph(below);
    g->setData(x, y, true);
    below = g;
  }
}

namespace {

/// Minima and maxima of `series` over `columns` equal stretches of events (fewer when there
/// are fewer events); keys: each stretch's first event.
struct Envelope {
  QVector<double> keys, lo, hi;
  /// The line moves visibly within a column in more than a few columns (a line that flips
  /// every event), not just at a single jump or along a ramp.
  bool spread = false;
};

Envelope envelopeOf(const QVector<qint64>& series, int columns, bool log) {
  Envelope e;
  const qint64 n = series.size();
  // With no more events than columns each column holds one event: nothing lies within a pixel,
  // so there is no band (widening would draw every step as a block).
  const bool aggregated = n > columns;
  columns = static_cast<int>(std::min<qint64>(n, columns));
  for (int c = 0; c < columns; ++c) {
    const qint64 begin = n * c / columns, end = n * (c + 1) / columns;
    if (begin >= end) continue;
    const auto [lo, hi] = std::minmax_element(series.begin() + begin, series.begin() + end);
    e.keys << double(begin);
    e.lo << std::max(*lo / kMiB, log ? ChartView::kLogFloorMiB : 0.0);
    e.hi << std::max(*hi / kMiB, log ? ChartView::kLogFloorMiB : 0.0);
  }
  // Each column's range widened to its neighbours': a line that rises and falls over a few
  // columns is a band with steady edges, not a comb of vertical strokes.
  const QVector<double> lo = e.lo, hi = e.hi;
  for (int i = 0; aggregated && i < hi.size(); ++i)
    for (int j = std::max(0, i - 1); j <= std::min(int(hi.size()) - 1, i + 1); ++j) {
      e.lo[i] = std::min(e.lo[i], lo[j]);
      e.hi[i] = std::max(e.hi[i], hi[j]);
    }
  const double top = e.hi.isEmpty() ? 0 : *std::max_element(e.hi.begin(), e.hi.end());
  int spreadColumns = 0;
  for (int i = 0; i < e.hi.size(); ++i) spreadColumns += e.hi[i] - e.lo[i] > 0.01 * top;
  e.spread = aggregated && spreadColumns >= std::max(2, columns / 100);
  if (n > 0) {  // the last event closes the step
    e.keys << double(n - 1);
    e.lo << e.lo.back();
    e.hi << e.hi.back();
  }
  return e;
}

}  // namespace

void MemoryTimelineChart::addLines() {
  QCustomPlot* p = plot();
  const struct {
    const char* name;
    const QVector<qint64>* series;
    Qt::PenStyle style;
    QColor color;
  } lines[] = {
      {"requested", &model_->requestedSeries(), Qt::DashLine, QColor(60, 60, 60)},
      {"reserved", &model_->reservedSeries(), Qt::SolidLine, QColor(0, 0, 0)},
  };
  for (const auto& l : lines) {
    const Envelope e = envelopeOf(*l.series, lineColumns(), logScale());
    auto* g = p->addGraph();
    g->setName(QString::fromLatin1(l.name));
    g->setLineStyle(QCPGraph::lsStepLeft);
    g->setPen(QPen(l.color, lineWidth(), l.style));
    g->setData(e.keys, e.hi, true);
    if (!e.spread) continue;
    // Where the line moves within a column: its range as a pale band, named in the legend.
    auto* band = p->addGraph();
    band->setName(QString::fromLatin1(l.name) + QStringLiteral(": range within a pixel"));
    band->setLineStyle(QCPGraph::lsStepLeft);
    QColor fill = l.color;
    fill.setAlpha(50);
    band->setPen(QPen(fill, 1));
    band->setBrush(fill);
    band->setData(e.keys, e.lo, true);
    band->setChannelFillGraph(g);
  }
}

void MemoryTimelineChart::setValueRange() {
  QCustomPlot* p = plot();
  const double allocated = model_->peakAllocatedBytes() / kMiB;
  double lines = 0;
  for (const auto* series : {&model_->reservedSeries(), &model_->requestedSeries()})
    for (const qint64 v : *series) lines = std::max<double>(lines, v / kMiB);
  const double top = scaleToAllocated_ ? allocated : std::max(allocated, lines);
  p->yAxis->setRange(logScale() ? QCPRange(kLogFloorMiB, std::max(1.0, top) * 3)
                                : QCPRange(0, std::max(top, 1e-3) * 1.15));
  if (!scaleToAllocated_ || lines <= p->yAxis->range().upper) return;
  // In the title: a note inside the plot would cover the peak's label.
  auto* title = static_cast<QCPTextElement*>(p->plotLayout()->element(0, 0));
  title->setText(title->text() +
                 QStringLiteral("\n(scaled to allocated: reserved reaches %1, above the chart)")
                     .arg(QString::fromStdString(formatSize(qint64(lines * kMiB)))));
}

bool MemoryTimelineChart::showsPeak(const QString& text) const {
  for (const QString& t : texts())
    if (t == text || (t.endsWith(QChar(0x2026)) && text.startsWith(t.chopped(1)))) return true;
  return false;
}

void MemoryTimelineChart::markPeak() {
  QCustomPlot* p = plot();
  const int peak = model_->peakEvent();
  if (peak < 0) return;
  const double mib = model_->peakAllocatedBytes() / kMiB;
  auto* dot = new QCPItemTracer(p);
  dot->setStyle(QCPItemTracer::tsCircle);
  dot->setSize(presentationMode() ? 14 : 9);
  dot->setPen(QPen(QColor(200, 0, 0), 2));
  dot->position->setCoords(peak, mib);
  auto* label = new QCPItemText(p);
  QFont f = font();
  f.setPointSize(fontPointSize(9));
  f.setBold(true);
  label->setFont(f);
  label->setColor(QColor(200, 0, 0));
  label->setText(QStringLiteral("peak ") + model_->peakText());
  label->position->setParentAnchor(dot->position);
  label->position->setCoords(0, -8);
  label->setPositionAlignment(Qt::AlignBottom | Qt::AlignHCenter);
  peakLabel_ = label;
  peakText_ = label->text();
  peakX_ = peak;
  label->setBrush(QColor(255, 255, 255, 210));
  label->setPadding(QMargins(3, 1, 3, 1));
}

void MemoryTimelineChart::fitPeakLabel() {
  if (!peakLabel_) return;
  QCustomPlot* p = plot();
  const QRect r = p->axisRect()->rect();
  const double x = p->xAxis->coordToPixel(peakX_);
  const QFontMetrics metrics(peakLabel_->font());
  const int half = metrics.horizontalAdvance(peakText_) / 2 + 4;
  if (x - half >= r.left() && x + half <= r.right()) {
    peakLabel_->setText(peakText_);
    peakLabel_->setPositionAlignment(Qt::AlignBottom | Qt::AlignHCenter);
    return;
  }
  const bool toTheRight = r.right() - x >= x - r.left();
  const int room = int(toTheRight ? r.right() - x : x - r.left()) - 12;
  peakLabel_->setText(metrics.elidedText(peakText_, Qt::ElideRight, std::max(room, 60)));
  peakLabel_->setPositionAlignment(Qt::AlignBottom | (toTheRight ? Qt::AlignLeft : Qt::AlignRight));
}

void MemoryTimelineChart::markStatementEnd() {
  const int event = model_->statementEndEvent();
  if (event < 0) return;
  QCustomPlot* p = plot();
  auto* line = new QCPItemStraightLine(p);
  line->point1->setCoords(event - 0.5, 0);
  line->point2->setCoords(event - 0.5, 1);
  line->setPen(QPen(QColor(90, 90, 90), presentationMode() ? 2 : 1, Qt::DashDotLine));
  auto* label = new QCPItemText(p);
  label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
  // At the bottom, over the bands: the peak's label is near the top, often at this event.
  label->position->setCoords(event - 0.5, 0.98);
  label->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
  label->setBrush(QColor(255, 255, 255, 210));
  label->setPadding(QMargins(4, 2, 4, 2));
  QFont f = font();
  f.setPointSize(fontPointSize(9));
  label->setFont(f);
  label->setColor(QColor(60, 60, 60));
  label->setText(QStringLiteral("end of the statement: backward from here"));
}

QString MemoryTimelineChart::toolTipAt(const QPoint& pos) const {
  if (!model_ || plotted_.isEmpty() || !plot()->axisRect()->rect().contains(pos)) return {};
  const double key = plot()->xAxis->pixelToCoord(pos.x());
  const int event = std::clamp(static_cast<int>(std::lround(key)), 0, model_->eventCount() - 1);
  // Nearest plotted event at or before the mouse (the step drawn there).
  const auto it = std::upper_bound(plotted_.begin(), plotted_.end(), event);
  const int shown = it == plotted_.begin() ? plotted_.front() : *(it - 1);
  return model_->tooltipAt(shown);
}

QString MemoryTimelineChart::csv() const {
  if (!model_ || model_->eventCount() == 0) return {};
  QString out = QStringLiteral(
      "event,op,label,category,allocated_mib,requested_mib,reserved_mib,why_alive\n");
  for (int i = 0; i < model_->eventCount(); ++i) {
    const QModelIndex cat = model_->index(i, MemoryTimelineModel::Category);
    out += QStringLiteral("%1,%2,%3,%4,%5,%6,%7,%8\n")
               .arg(i)
               .arg(csvField(model_->opAt(i)), csvField(model_->labelAt(i)),
                    csvField(model_->data(cat).toString()),
                    QString::number(model_->allocatedSeries()[i] / kMiB, 'g', 12),
                    QString::number(model_->requestedSeries()[i] / kMiB, 'g', 12),
                    QString::number(model_->reservedSeries()[i] / kMiB, 'g', 12),
                    csvField(model_->labelAt(i).isEmpty() ? QString() : model_->whyAliveAt(i)));
  }
  return out;
}

}  // namespace matmulviz::ui
