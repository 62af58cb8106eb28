#include "ui/charts/big_timeline_chart.h"

#include "core/io/timeline_store.h"
#include "core/memory/memory_event.h"
#include "core/util/format_units.h"

#include <qcustomplot.h>

#include <QElapsedTimer>

#include <algorithm>
#include <cmath>

namespace matmulviz::ui {

namespace {

QString bytesText(int64_t bytes) {
  return QString::fromStdString(formatSize(bytes));
}

}  // namespace

BigTimelineChart::BigTimelineChart(QWidget* parent) : ChartView(parent) {
  plot()->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  plot()->axisRect()->setRangeDrag(Qt::Horizontal);
  plot()->axisRect()->setRangeZoom(Qt::Horizontal);
  plot()->setNoAntialiasingOnDrag(true);
  connect(plot()->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this,
          [this] { refresh(); });
  // The axis rect gets its width in a replot's layout step, before anything is drawn: new
  // columns for a new width are made there.
  connect(plot(), &QCustomPlot::afterLayout, this, [this] {
    if (plot()->axisRect()->width() != pixels_) refresh(false);
  });
  rebuild();
}

BigTimelineChart::~BigTimelineChart() = default;

int BigTimelineChart::columnCount() const {
  return int(columns_.size());
}

void BigTimelineChart::setStore(std::shared_ptr<const store::TimelineStore> store, int64_t device) {
  store_ = std::move(store);
  device_ = device;
  events_ = 0;
  if (store_)
    for (const store::DeviceInfo& d : store_->devices())
      if (d.id == device) events_ = d.events;
  rebuild();
}

void BigTimelineChart::setVisibleRange(double first, double last) {
  plot()->xAxis->setRange(first, last);  // refresh() clamps and redraws
}

QString BigTimelineChart::chartName() const {
  return QStringLiteral("memory-timeline-cuda-%1").arg(device_);
}

void BigTimelineChart::setTitle() {
  QCustomPlot* p = plot();
  if (p->plotLayout()->rowCount() == 1) {
    p->plotLayout()->insertRow(0);
    p->plotLayout()->addElement(0, 0, new QCPTextElement(p, QString()));
    p->plotLayout()->setRowStretchFactor(0, 0.01);
  }
  auto* title = titleElement();
  title->setText(store_ ? QStringLiteral("memory timeline of cuda:%1, %2 events: allocated "
                                         "(min to max per pixel), requested, reserved")
                              .arg(device_)
                              .arg(QLocale().toString(qlonglong(events_)))
                        : QStringLiteral("memory timeline (nothing opened)"));
}

void BigTimelineChart::rebuild() {
  QCustomPlot* p = plot();
  p->clearPlottables();
  p->clearItems();
  band_ = nullptr;
  applyStyle();
  setTitle();
  p->xAxis->setLabel(QStringLiteral("allocator event (in order)"));
  p->yAxis->setLabel(QStringLiteral("memory (MiB)"));
  setIntegerTicks(p->xAxis);
  if (!store_ || events_ == 0) {
    columns_.clear();
    showPlaceholder(QStringLiteral("Open a PyTorch memory snapshot to see its timeline"));
    p->replot();
    return;
  }
  // One-pixel (cosmetic) pens: a wide pen is stroked into a polygon, and the zig-zag of
  // thousands of per-pixel maxima makes that polygon cost hundreds of milliseconds to fill.
  // The band from each column's minimum to its maximum is one vertical line per column
  // (QCPFinancial's high-low bars), not a filled polygon, for the same reason.
  const QColor alloc = seriesColor(0), reserved = seriesColor(1), requested = seriesColor(2);
  auto cosmetic = [](const QColor& c, Qt::PenStyle style = Qt::SolidLine) {
    QPen pen(c, 1, style);
    pen.setCosmetic(true);
    return pen;
  };
  auto* band = new QCPFinancial(p->xAxis, p->yAxis);
  band->setName(QStringLiteral("allocated, min to max per pixel"));
  band->setChartStyle(QCPFinancial::csOhlc);
  band->setWidthType(QCPFinancial::wtAbsolute);
  band->setWidth(0);
  QColor bandColor = alloc;
  bandColor.setAlpha(120);
  band->setPen(cosmetic(bandColor));
  band->setAntialiased(false);  // whole pixels: antialiased, each line smears over two
  band->setTwoColored(false);
  auto* high = p->addGraph();
  high->setName(QStringLiteral("allocated (max)"));
  high->setPen(cosmetic(alloc));
  auto* req = p->addGraph();
  req->setName(QStringLiteral("requested (max)"));
  req->setPen(cosmetic(requested, Qt::DashLine));
  auto* res = p->addGraph();
  res->setName(QStringLiteral("reserved (max)"));
  res->setPen(cosmetic(reserved));
  for (int g = 0; g < p->graphCount(); ++g) p->graph(g)->setLineStyle(QCPGraph::lsStepLeft);
  band_ = band;
  p->legend->setVisible(true);
  p->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  int64_t top = 1;
  for (const store::DeviceInfo& d : store_->devices())
    if (d.id == device_) top = std::max({top, d.peakAllocated, d.maxReserved});
  p->yAxis->setRange(0, double(top) / kMiB * 1.08);
  markPeak();
  {
    const QSignalBlocker block(p->xAxis);
    p->xAxis->setRange(0, double(events_));
  }
  refresh();
}

void BigTimelineChart::markPeak() {
  const auto& devices = store_->devices();
  const auto d = std::find_if(devices.begin(), devices.end(),
                              [&](const store::DeviceInfo& i) { return i.id == device_; });
  if (d == devices.end()) return;
  QCustomPlot* p = plot();
  const double x = double(d->peakIndex), y = double(d->peakAllocated) / kMiB;
  auto* line = new QCPItemLine(p);
  line->start->setCoords(x, 0);
  line->end->setCoords(x, y);
  line->setPen(QPen(Qt::black, 1, Qt::DotLine));
  auto* label = new QCPItemText(p);
  label->setObjectName(QStringLiteral("peakLabel"));
  label->position->setCoords(x, y);
  label->setPositionAlignment(Qt::AlignBottom | Qt::AlignHCenter);
  label->setText(QStringLiteral("peak %1 at event %2")
                     .arg(bytesText(d->peakAllocated), QLocale().toString(qlonglong(x))));
  QFont f = font();
  f.setPointSize(fontPointSize(9));
  f.setBold(true);
  label->setFont(f);
  label->setClipToAxisRect(false);
}

// Asks the store for the visible range at the plot's width and replots once the events are
// handled (a drag moves the range many times between two frames).
void BigTimelineChart::refresh(bool replot) {
  QCustomPlot* p = plot();
  if (!store_ || events_ == 0 || refreshing_ || p->graphCount() < 3 || !band_) return;
  refreshing_ = true;
  QElapsedTimer timer;
  timer.start();
  QCPRange r = p->xAxis->range();
  const double span = std::clamp(r.size(), 8.0, double(events_));
  double lo = std::clamp(r.lower, 0.0, double(events_) - span);
  if (lo != r.lower || span != r.size()) p->xAxis->setRange(lo, lo + span);
  pixels_ = p->axisRect()->width();
  columns_ = store_->columns(device_, lo, lo + span, std::max(1, pixels_));
  const int n = int(columns_.size());
  QVector<double> keys(n), aMin(n), aMax(n), req(n), res(n);
  for (int i = 0; i < n; ++i) {
    const store::Bucket& b = columns_[size_t(i)];
    keys[i] = double(b.first);
    aMin[i] = double(b.allocMin) / kMiB;
    aMax[i] = double(b.allocMax) / kMiB;
    req[i] = double(b.reqMax) / kMiB;
    res[i] = double(b.resMax) / kMiB;
  }
  band_->setData(keys, aMin, aMax, aMin, aMax, true);  // open, high, low, close
  alignPeakLabel(lo, lo + span);
  p->graph(0)->setData(keys, aMax, true);
  p->graph(1)->setData(keys, req, true);
  p->graph(2)->setData(keys, res, true);
  queryMs_ = double(timer.nsecsElapsed()) / 1e6;
  refreshing_ = false;
  if (replot) p->replot(QCustomPlot::rpQueuedReplot);
}

// The peak's label stays inside the plot: to the left of its line near the right edge.
void BigTimelineChart::alignPeakLabel(double lo, double hi) {
  for (int i = 0; i < plot()->itemCount(); ++i) {
    auto* label = qobject_cast<QCPItemText*>(plot()->item(i));
    if (!label || label->objectName() != QLatin1String("peakLabel")) continue;
    const double at = (label->position->key() - lo) / (hi - lo);
    label->setPositionAlignment(Qt::AlignBottom | (at > 0.8   ? Qt::AlignRight
                                                   : at < 0.2 ? Qt::AlignLeft
                                                              : Qt::AlignHCenter));
  }
}

QString BigTimelineChart::eventText(int64_t index) const {
  if (!store_ || index < 0 || index >= events_) return {};
  const std::vector<store::StoredEvent> ev = store_->events(device_, index, 1);
  if (ev.empty()) return {};
  const store::StoredEvent& e = ev.front();
  const auto [label, function] = store_->stack(e.stack);
  const auto kind = static_cast<MemoryEventKind>(e.kind);
  QString text = QStringLiteral("event %1 at %2 us: %3 %4")
                     .arg(QLocale().toString(qlonglong(index)))
                     .arg(QLocale().toString(e.timeUs, 'f', 0))
                     .arg(QString::fromLatin1(memoryEventKindName(kind)), bytesText(e.bytes));
  if (kind == MemoryEventKind::Alloc || kind == MemoryEventKind::Free)
    text += QStringLiteral(" (block 0x%1)").arg(qulonglong(e.addr), 0, 16);
  text += QStringLiteral("\n%1 in %2")
              .arg(QString::fromStdString(label), QString::fromStdString(function));
  text += QStringLiteral("\nallocated %1, requested %2, reserved %3")
              .arg(bytesText(e.allocated), bytesText(e.requested), bytesText(e.reserved));
  return text;
}

QString BigTimelineChart::toolTipAt(const QPoint& pos) const {
  QCustomPlot* p = plot();
  if (!store_ || !p->axisRect()->rect().contains(pos)) return {};
  const double x = p->xAxis->pixelToCoord(pos.x());
  const auto index = int64_t(std::floor(x));
  QString text = eventText(index);
  if (text.isEmpty()) return {};
  // Zoomed out, one pixel holds many events: say what the column spans.
  for (const store::Bucket& b : columns_)
    if (b.first <= index && index <= b.last && b.last > b.first)
      text +=
          QStringLiteral("\nthis pixel: events %1 to %2, allocated %3 to %4")
              .arg(QLocale().toString(qlonglong(b.first)), QLocale().toString(qlonglong(b.last)),
                   bytesText(b.allocMin), bytesText(b.allocMax));
  return text;
}

QString BigTimelineChart::csv() const {
  if (columns_.empty()) return {};
  QString out = QStringLiteral(
      "first_event,last_event,allocated_min_mib,allocated_max_mib,reserved_max_mib\n");
  for (const store::Bucket& b : columns_)
    out += QStringLiteral("%1,%2,%3,%4,%5\n")
               .arg(b.first)
               .arg(b.last)
               .arg(double(b.allocMin) / kMiB, 0, 'f', 3)
               .arg(double(b.allocMax) / kMiB, 0, 'f', 3)
               .arg(double(b.resMax) / kMiB, 0, 'f', 3);
  return out;
}

}  // namespace matmulviz::ui
