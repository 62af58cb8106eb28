#include "ui/charts/allocation_bands_chart.h"

#include "core/io/snapshot_categories.h"
#include "core/util/format_units.h"
#include "ui/models/snapshot_allocations.h"

#include <qcustomplot.h>

#include <cmath>

namespace matmulviz::ui {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

/// A colour per allocation: hues a golden angle apart, so that neighbours differ.
QColor bandColor(uint32_t element, bool vivid) {
  const double hue = std::fmod(element * 0.6180339887, 1.0);
  return QColor::fromHslF(float(hue), vivid ? 0.85f : 0.55f, vivid ? 0.5f : 0.62f);
}

/// Every band as a filled polygon (bottom edge forward, top edge back), then the summary in
/// grey; bands outside the visible steps are skipped.
class BandsPlottable : public QCPAbstractPlottable {
 public:
  BandsPlottable(QCPAxis* key, QCPAxis* value, const SnapshotAllocations::Device& d, bool vivid)
      : QCPAbstractPlottable(key, value), d_(d), vivid_(vivid) {}

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
    const QCPRange visible = mKeyAxis->range();
    const snapshot::AllocationBands& b = d_.bands;
    QPolygonF poly;
    for (const snapshot::AllocationBand& band : b.bands) {
      if (band.steps.back() < visible.lower || band.steps.front() > visible.upper) continue;
      const double size = double(b.elements[band.element].size);
      poly.clear();
      for (size_t i = 0; i < band.steps.size(); ++i)
        poly << coordsToPixels(band.steps[i], band.offsets[i] / kMiB);
      for (size_t i = band.steps.size(); i-- > 0;)
        poly << coordsToPixels(band.steps[i], (band.offsets[i] + size) / kMiB);
      const QColor c = bandColor(band.element, vivid_);
      painter->setPen(QPen(c.darker(125), 0));
      painter->setBrush(c);
      painter->drawPolygon(poly);
    }
    poly.clear();
    for (size_t i = 0; i < b.summarySteps.size(); ++i)
      poly << coordsToPixels(b.summarySteps[i], b.summaryOffsets[i] / kMiB);
    for (size_t i = b.summarySteps.size(); i-- > 0;)
      poly << coordsToPixels(b.summarySteps[i], (b.summaryOffsets[i] + b.summarySizes[i]) / kMiB);
    painter->setPen(Qt::NoPen);
    painter->setBrush(QColor(150, 150, 150));
    painter->drawPolygon(poly);
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
  QString out = QStringLiteral("band,address,size_bytes,category,first_step,last_step\n");
  for (size_t i = 0; i < d->bands.bands.size(); ++i) {
    const snapshot::AllocationBand& band = d->bands.bands[i];
    const snapshot::BandElement& e = d->bands.elements[band.element];
    out += QStringLiteral("%1,0x%2,%3,%4,%5,%6\n")
               .arg(i)
               .arg(qulonglong(e.addr), 0, 16)
               .arg(e.size)
               .arg(QString::fromUtf8(
                   memoryCategoryName(snapshot::categoryOfStack(allocations_->snapshot, e.stack))))
               .arg(band.steps.front())
               .arg(band.steps.back());
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
  auto* title = static_cast<QCPTextElement*>(p->plotLayout()->element(0, 0));
  QFont f = font();
  f.setPointSize(fontPointSize(11));
  f.setBold(true);
  title->setFont(f);
  const int bands = bandCount(), all = allocationCount();
  title->setText(
      bands == 0 && all == 0
          ? QStringLiteral("active memory by allocation (no snapshot open)")
          : QStringLiteral("active memory of %1 by allocation: %2 of %3 allocations drawn one "
                           "by one (the largest)%4")
                .arg(name_)
                .arg(bands)
                .arg(all)
                .arg(bands < all ? QStringLiteral(", the rest summarised in grey on top")
                                 : QString()));
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
  label->setText(QStringLiteral("peak %1 at step %2")
                     .arg(QString::fromStdString(formatSize(d->bands.peakBytes)))
                     .arg(qint64(d->bands.peakStep)));
  label->position->setParentAnchor(dot->position);
  const bool right = d->bands.peakStep < 0.6 * double(d->bands.stepCount());
  label->setPositionAlignment((right ? Qt::AlignLeft : Qt::AlignRight) | Qt::AlignBottom);
  label->position->setCoords(right ? 8 : -8, -6);
}

void AllocationBandsChart::rebuild() {
  QCustomPlot* p = plot();
  p->clearPlottables();
  p->clearItems();
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
