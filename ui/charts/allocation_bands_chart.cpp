#include "ui/charts/allocation_bands_chart.h"

#include "core/io/snapshot_categories.h"
#include "core/util/format_units.h"
#include "ui/models/snapshot_allocations.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace matmulviz::ui {

namespace {

/// A colour per allocation: hues a golden angle apart, so that neighbours differ.
QColor bandColor(uint32_t element, bool vivid) {
  const double hue = std::fmod(element * 0.6180339887, 1.0);
  return QColor::fromHslF(float(hue), vivid ? 0.85f : 0.55f, vivid ? 0.5f : 0.62f);
}

/// A band from vertex `first` to `last` (inclusive) in `color`, `outlined` in a darker line
/// where it is more than 4 pixels tall (never the summary: it is often empty). Up to two vertices a
/// pixel column: a polygon, bottom edge forward and top edge back (a band that never slid, four
/// corners: a rectangle). More (a summary of a million steps): level of detail, one rectangle
/// per pixel column from its lowest bottom to its highest top, clamped to the axis rect (a
/// polygon of a million points, or one reaching far outside a zoomed view, takes Qt's
/// rasterizer hundreds of milliseconds).
template <typename Bottom, typename Top>
void drawBand(QCPPainter* painter, const QCPAbstractPlottable& p, const std::vector<double>& steps,
              size_t first, size_t last, Bottom bottom, Top top, const QColor& color,
              bool outlined) {
  const QCPAxis* x = p.keyAxis();
  const QCPAxis* y = p.valueAxis();
  const QRect area = x->axisRect()->rect();
  if (double(last - first + 1) <= 2 * std::max(1, area.width())) {
    QPolygonF poly;
    for (size_t i = first; i <= last; ++i)
      poly << QPointF(x->coordToPixel(steps[i]), y->coordToPixel(bottom(i)));
    for (size_t i = last + 1; i-- > first;)
      poly << QPointF(x->coordToPixel(steps[i]), y->coordToPixel(top(i)));
    const QRectF box = poly.boundingRect();
    const bool outline = outlined && box.height() > 4;  // where it shows beside the fill
    if (poly.size() == 4 && poly[0].y() == poly[1].y() && poly[2].y() == poly[3].y()) {
      painter->fillRect(box, color);
      if (!outline) return;
      painter->setBrush(Qt::NoBrush);
    } else {
      painter->setBrush(color);
    }
    painter->setPen(outline ? QPen(color.darker(125), 0) : QPen(Qt::NoPen));
    painter->drawPolygon(poly);
    return;
  }
  const double lowest = area.bottom() + 1.0, highest = area.top() - 1.0;
  auto fill = [&](double column, double lo, double hi) {
    const double y0 = std::clamp(y->coordToPixel(hi), highest, lowest);
    const double y1 = std::clamp(y->coordToPixel(lo), highest, lowest);
    if (y1 > y0) painter->fillRect(QRectF(column, y0, 1, y1 - y0), color);
  };
  // The key axis is linear: its pixel by one multiply, not coordToPixel a million times.
  const double x0 = x->coordToPixel(0), perStep = x->coordToPixel(1) - x0;
  double column = std::floor(x0 + perStep * steps[first]);
  double lo = bottom(first), hi = top(first);
  for (size_t i = first + 1; i <= last; ++i) {
    const double c = std::floor(x0 + perStep * steps[i]);
    if (c != column) {
      fill(column, lo, hi);
      column = c;
      lo = bottom(i);
      hi = top(i);
    } else {
      lo = std::min(lo, bottom(i));
      hi = std::max(hi, top(i));
    }
  }
  fill(column, lo, hi);
}

/// The vertices of `steps` that the visible range [lo, hi] needs: the last one at or before lo
/// to the first one at or after hi.
std::pair<size_t, size_t> visibleVertices(const std::vector<double>& steps, double lo, double hi) {
  const size_t first = size_t(std::max<std::ptrdiff_t>(
      0, std::upper_bound(steps.begin(), steps.end(), lo) - steps.begin() - 1));
  const size_t last = std::min(
      steps.size() - 1, size_t(std::lower_bound(steps.begin(), steps.end(), hi) - steps.begin()));
  return {first, last};
}

/// The summary in grey, then every band on top of it (the summary lies above the bands; drawn
/// first, its level of detail never paints over a band). Bands outside the visible steps are
/// skipped; without antialiasing (thousands of polygons).
class BandsPlottable : public QCPAbstractPlottable {
 public:
  BandsPlottable(QCPAxis* key, QCPAxis* value, const SnapshotAllocations::Device& d, bool vivid)
      : QCPAbstractPlottable(key, value), d_(d), vivid_(vivid) {
    setAntialiased(false);
  }

  double selectTest(const QPointF&, bool, QVariant*) const override { return -1; }
  QCPRange getKeyRange(bool& found, QCP::SignDomain) const override {
    found = d_.bands.stepCount() > 0;
    return {0, double(d_.bands.stepCount())};
  }
  QCPRange getValueRange(bool& found, QCP::SignDomain, const QCPRange&) const override {
    found = true;
    return {0, d_.bands.peakBytes / kMiB};
  }

 protected:
  void draw(QCPPainter* painter) override {
    applyDefaultAntialiasingHint(painter);
    const QCPRange visible = mKeyAxis->range();
    const snapshot::AllocationBands& b = d_.bands;
    if (!b.summarySteps.empty()) {
      const auto [first, last] = visibleVertices(b.summarySteps, visible.lower, visible.upper);
      drawBand(
          painter, *this, b.summarySteps, first, last,
          [&](size_t i) { return b.summaryOffsets[i] / kMiB; },
          [&](size_t i) { return (b.summaryOffsets[i] + b.summarySizes[i]) / kMiB; },
          QColor(150, 150, 150), false);
    }
    for (const snapshot::AllocationBand& band : b.bands) {
      if (band.steps.back() < visible.lower || band.steps.front() > visible.upper) continue;
      const double size = double(b.elements[band.element].size);
      const auto [first, last] = visibleVertices(band.steps, visible.lower, visible.upper);
      drawBand(
          painter, *this, band.steps, first, last, [&](size_t i) { return band.offsets[i] / kMiB; },
          [&](size_t i) { return (band.offsets[i] + size) / kMiB; },
          bandColor(band.element, vivid_), true);
    }
  }
  void drawLegendIcon(QCPPainter*, const QRectF&) const override {}

 private:
  const SnapshotAllocations::Device& d_;
  bool vivid_;
};

}  // namespace

AllocationBandsChart::AllocationBandsChart(QWidget* parent) : ChartView(parent) {
  plot()->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  plot()->axisRect()->setRangeDrag(Qt::Horizontal | Qt::Vertical);
  plot()->axisRect()->setRangeZoom(Qt::Horizontal | Qt::Vertical);
  plot()->setNoAntialiasingOnDrag(true);
  rebuild();
}

void AllocationBandsChart::setDevice(std::shared_ptr<const SnapshotAllocations> allocations,
                                     const QString& name) {
  allocations_ = std::move(allocations);
  name_ = name;
  rebuild();
}

const SnapshotAllocations::Device* AllocationBandsChart::device() const {
  return allocations_ ? allocations_->device(name_) : nullptr;
}

QString AllocationBandsChart::chartName() const {
  return QStringLiteral("memory-allocations-") + QString(name_).replace(':', '-');
}

int AllocationBandsChart::bandCount() const {
  const auto* d = allocations_ ? allocations_->device(name_) : nullptr;
  return d ? int(d->bands.bands.size()) : 0;
}

int AllocationBandsChart::allocationCount() const {
  const auto* d = allocations_ ? allocations_->device(name_) : nullptr;
  return d ? int(d->bands.elements.size()) : 0;
}

QString AllocationBandsChart::csv() const {
  const auto* d = allocations_ ? allocations_->device(name_) : nullptr;
  if (!d || d->bands.bands.empty()) return {};
  QString out = QStringLiteral(
      "band,address,size_bytes,category,first_step,last_step,alloc_event,free_event\n");
  const snapshot::BlockCategorizer categorizer(*allocations_->snapshot, d->index);
  for (size_t i = 0; i < d->bands.bands.size(); ++i) {
    const snapshot::AllocationBand& band = d->bands.bands[i];
    const snapshot::BandElement& e = d->bands.elements[band.element];
    out +=
        QStringLiteral("%1,0x%2,%3,%4,%5,%6,%7,%8\n")
            .arg(i)
            .arg(qulonglong(e.addr), 0, 16)
            .arg(e.size)
            .arg(QString::fromUtf8(memoryCategoryName(
                categorizer.categorize({e.stack, e.size, e.allocEvent, e.freeEvent}).category)))
            .arg(band.steps.front())
            .arg(band.steps.back())
            .arg(e.allocEvent < 0 ? QString() : QString::number(d->eventOfTraceEntry(e.allocEvent)))
            .arg(e.freeEvent < 0 ? QString() : QString::number(d->eventOfTraceEntry(e.freeEvent)));
  }
  return out;
}

void AllocationBandsChart::setupAxes() {
  QCustomPlot* p = plot();
  addTitleAndLegendRows();
  p->legend->setVisible(false);
  p->xAxis->setLabel(
      QStringLiteral("allocator step (one per alloc or free; a free slides the blocks above "
                     "it down over 3 steps, as PyTorch's memory_viz)"));
  setIntegerTicks(p->xAxis);
  p->yAxis->setLabel(QStringLiteral("active memory (MiB)"));
  auto* title = titleElement();
  const int bands = bandCount(), all = allocationCount();
  if (bands == 0 && all == 0)
    title->setText(QStringLiteral("active memory by allocation (no snapshot open)"));
  else if (bands == all)
    title->setText(QStringLiteral("active memory of %1 by allocation: each of its %2 "
                                  "allocations a band")
                       .arg(name_)
                       .arg(all));
  else  // two lines: the wider one fits a 1280-pixel window
    title->setText(QStringLiteral("active memory of %1 by allocation\nthe %2 largest of %3 "
                                  "allocations a band each, the rest summarised in grey on top")
                       .arg(name_)
                       .arg(bands)
                       .arg(all));
}

void AllocationBandsChart::markPeak() {
  const auto* d = allocations_->device(name_);
  QCustomPlot* p = plot();
  auto* dot = new QCPItemTracer(p);
  dot->setStyle(QCPItemTracer::tsCircle);
  dot->setSize(presentationMode() ? 14 : 9);
  dot->setPen(QPen(QColor(200, 0, 0), 2));
  dot->position->setCoords(d->bands.peakStep + 0.5, d->bands.peakBytes / kMiB);
  auto* label = new QCPItemText(p);
  QFont f = font();
  f.setPointSize(fontPointSize(9));
  f.setBold(true);
  label->setFont(f);
  label->setColor(QColor(200, 0, 0));
  // Named by its event only, as the Memory view's header and table number events (the dot's
  // place on the step axis shows where it falls; one count for one moment).
  peakLabel_ = label;
  label->setText(QStringLiteral("peak %1 at event %2")
                     .arg(QString::fromStdString(formatSize(d->bands.peakBytes)))
                     .arg(d->eventAtStep(d->bands.peakStep)));
  label->position->setParentAnchor(dot->position);
  const bool right = d->bands.peakStep < 0.6 * double(d->bands.stepCount());
  label->setPositionAlignment((right ? Qt::AlignLeft : Qt::AlignRight) | Qt::AlignBottom);
  label->position->setCoords(right ? 8 : -8, -6);
}

QString AllocationBandsChart::peakText() const {
  return peakLabel_ ? peakLabel_->text() : QString();
}

void AllocationBandsChart::rebuild() {
  QCustomPlot* p = plot();
  p->clearPlottables();
  p->clearItems();
  peakLabel_ = nullptr;
  setupAxes();
  const auto* d = allocations_ ? allocations_->device(name_) : nullptr;
  if (d && d->bands.stepCount() > 0) {
    new BandsPlottable(p->xAxis, p->yAxis, *d, presentationMode());
    markPeak();
    p->xAxis->setRange(0, double(d->bands.stepCount()));
    p->yAxis->setRange(0, std::max(d->bands.peakBytes / kMiB, 1e-6) * 1.08);
  } else {
    p->xAxis->setRange(0, 1);
    p->yAxis->setRange(0, 1);
    showPlaceholder(QStringLiteral("Open a PyTorch memory snapshot to see its allocations"));
  }
  applyStyle();
  p->replot(QCustomPlot::rpQueuedReplot);
}

QString AllocationBandsChart::textAt(double step, double bytes) const {
  const auto* d = allocations_ ? allocations_->device(name_) : nullptr;
  if (!d) return {};
  return allocations_->bandText(*d, snapshot::bandAt(d->bands, step, bytes), step);
}

QPoint AllocationBandsChart::positionOf(double step, double bytes) const {
  return QPoint(int(std::lround(plot()->xAxis->coordToPixel(step))),
                int(std::lround(plot()->yAxis->coordToPixel(bytes / kMiB))));
}

QString AllocationBandsChart::toolTipAt(const QPoint& pos) const {
  if (!plot()->axisRect()->rect().contains(pos)) return {};
  return textAt(plot()->xAxis->pixelToCoord(pos.x()), plot()->yAxis->pixelToCoord(pos.y()) * kMiB);
}

}  // namespace matmulviz::ui
