#include "ui/widgets/segments_canvas.h"

#include "ui/models/allocator_state_model.h"

#include <QHelpEvent>
#include <QPaintEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <numeric>

namespace matmulviz::ui {

namespace {

using snapshot::BlockState;

// Tableau 10 as MemoryViz.js colours its blocks: blue allocated, red pending free.
const QColor kAllocated(0x4e, 0x79, 0xa7);
const QColor kRounding(0xa9, 0xc4, 0xe0);
const QColor kPending(0xe1, 0x57, 0x59);
const QColor kFree(Qt::white);
const QColor kOutline(0x33, 0x33, 0x33);
const QColor kEdge(Qt::white);  ///< between neighbouring blocks
constexpr int kBarHeight = 20;  ///< the bar; the label goes under it
constexpr double kMinSegmentPx = 3;

QString segmentLabel(const snapshot::StateSegment& s, const AllocatorStateModel& m, int index) {
  return QStringLiteral("%1 · %2 · %3%4 · stream %5")
      .arg(addressText(s.address), m.data(m.index(index, AllocatorStateModel::Size)).toString(),
           s.large ? QStringLiteral("large") : QStringLiteral("small"),
           s.expandable ? QStringLiteral(" expandable") : QString(), streamText(s.stream));
}

}  // namespace

SegmentsCanvas::SegmentsCanvas(const AllocatorStateModel* model, QWidget* parent)
    : QWidget(parent), model_(model) {
  setObjectName("segmentsCanvas");
  setMouseTracking(true);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
  connect(model_, &QAbstractItemModel::modelReset, this, [this] {
    relayout();
    update();
  });
}

void SegmentsCanvas::setPresentationMode(bool on) {
  presentation_ = on;
  update();
}

int SegmentsCanvas::pack(int width, QVector<QPointF>* at) const {
  const auto& segments = model_->state().segments;
  const int n = int(segments.size());
  if (at) at->resize(n);
  if (n == 0) return 0;
  QVector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  // As MemoryViz.js: by size, then address; a row holds what fits beside the largest.
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    const auto& x = segments[size_t(a)];
    const auto& y = segments[size_t(b)];
    return x.size != y.size ? x.size < y.size : x.address < y.address;
  });
  const double usable = std::max(1, width - 2 * kMargin);
  const double scale = 1.0 / bytesPerPixel(width);  // pixels per byte
  double x = 0;
  int row = 0;
  for (const int i : order) {
    const double w = std::max(kMinSegmentPx, double(segments[size_t(i)].size) * scale);
    if (x > 0 && x + w > usable + 0.5) {
      ++row;
      x = 0;
    }
    if (at) (*at)[i] = QPointF(kMargin + x, kLegendHeight + row * (kRowHeight + kRowGap));
    x += w + kSegmentGap;
  }
  return row + 1;
}

double SegmentsCanvas::bytesPerPixel(int width) const {
  int64_t largest = 1;
  for (const auto& s : model_->state().segments) largest = std::max(largest, s.size);
  return double(largest) / double(std::max(1, width - 2 * kMargin));
}

int SegmentsCanvas::heightFor(int width) const {
  return kLegendHeight + pack(width, nullptr) * (kRowHeight + kRowGap) + kMargin;
}

void SegmentsCanvas::relayout() {
  scale_ = 1.0 / bytesPerPixel(width());
  pack(width(), &at_);
  setMinimumHeight(heightFor(width()));
  updateGeometry();
}

void SegmentsCanvas::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  relayout();
}

QRectF SegmentsCanvas::segmentRect(int segment) const {
  if (segment < 0 || segment >= at_.size()) return {};
  const double w =
      std::max(kMinSegmentPx, double(model_->state().segments[size_t(segment)].size) * scale_);
  return QRectF(at_[segment], QSizeF(w, kBarHeight));
}

QRectF SegmentsCanvas::blockRect(int block) const {
  const auto& blocks = model_->state().blocks;
  if (block < 0 || size_t(block) >= blocks.size()) return {};
  const auto& b = blocks[size_t(block)];
  const QRectF seg = segmentRect(int(b.segment));
  const auto& s = model_->state().segments[b.segment];
  const double x = seg.left() + double(b.address - s.address) * scale_;
  const double w = std::max(b.state == BlockState::Inactive ? 0.0 : 1.0, double(b.size) * scale_);
  return QRectF(x, seg.top(), w, seg.height());
}

void SegmentsCanvas::paintLegend(QPainter& p) const {
  const struct {
    QColor colour;
    QString text;
  } items[] = {{kAllocated, tr("allocated")},
               {kRounding, tr("rounding above the request")},
               {kPending, tr("pending free")},
               {kFree, tr("free (cached)")}};
  int x = kMargin;
  const int y = 5;
  for (const auto& item : items) {
    p.setPen(kOutline);
    p.setBrush(item.colour);
    p.drawRect(x, y, 14, 12);
    p.drawText(x + 19, y + 11, item.text);
    x += 19 + p.fontMetrics().horizontalAdvance(item.text) + 16;
  }
}

void SegmentsCanvas::paintSegment(QPainter& p, int segment) const {
  const auto& s = model_->state().segments[size_t(segment)];
  const QRectF bar = segmentRect(segment);
  p.fillRect(bar, kFree);
  const int first = model_->firstBlock(segment);
  for (int b = first; b < first + model_->blockCount(segment); ++b) {
    const auto& block = model_->state().blocks[size_t(b)];
    if (block.state == BlockState::Inactive) continue;
    const QRectF r = blockRect(b).intersected(bar);
    if (block.state != BlockState::ActiveAllocated) {
      p.fillRect(r, kPending);
      if (r.width() >= 4) p.fillRect(QRectF(r.left(), r.top(), 1, r.height()), kEdge);
      continue;
    }
    const double used = std::min(block.requestedSize, block.size) * scale_;
    p.fillRect(r, kRounding);
    p.fillRect(QRectF(r.left(), r.top(), std::min(r.width(), std::max(1.0, used)), r.height()),
               kAllocated);
    if (r.width() >= 4) p.fillRect(QRectF(r.left(), r.top(), 1, r.height()), kEdge);
  }
  QPen outline(kOutline);
  outline.setCosmetic(true);
  if (s.expandable) outline.setStyle(Qt::DashLine);
  p.setPen(outline);
  p.setBrush(Qt::NoBrush);
  p.drawRect(bar);
  const QRectF label(bar.left(), bar.bottom() + 1, bar.width(), kRowHeight - kBarHeight - 1);
  const QString text = p.fontMetrics().elidedText(segmentLabel(s, *model_, segment), Qt::ElideRight,
                                                  int(label.width()));
  if (text.size() > 3 && text != QStringLiteral("…"))
    p.drawText(label, Qt::AlignLeft | Qt::AlignVCenter, text);
}

void SegmentsCanvas::paintEvent(QPaintEvent* event) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  QFont f = font();
  f.setPointSizeF(f.pointSizeF() * (presentation_ ? 1.0 : 0.85));
  p.setFont(f);
  p.setPen(palette().text().color());
  paintLegend(p);
  if (at_.isEmpty()) {
    p.setPen(palette().placeholderText().color());
    p.drawText(rect().adjusted(kMargin, kLegendHeight, -kMargin, 0), Qt::AlignLeft | Qt::AlignTop,
               tr("No segment at this event."));
    return;
  }
  for (int s = 0; s < at_.size(); ++s)
    if (segmentRect(s).adjusted(0, 0, 0, kRowHeight).intersects(event->rect())) paintSegment(p, s);
}

int SegmentsCanvas::segmentAt(const QPoint& pos) const {
  for (int s = 0; s < at_.size(); ++s)
    if (segmentRect(s).adjusted(0, 0, 0, kRowHeight - kBarHeight).contains(pos)) return s;
  return -1;
}

QString SegmentsCanvas::textAt(const QPoint& pos) const {
  const int s = segmentAt(pos);
  if (s < 0) return {};
  if (segmentRect(s).contains(pos)) {
    const int first = model_->firstBlock(s);
    const int last = first + model_->blockCount(s);
    // The last block starting at or before the cursor; a 1-pixel block wins over its gap.
    for (int b = last - 1; b >= first; --b) {
      const QRectF r = blockRect(b);
      if (r.left() <= pos.x() + 0.5 && pos.x() - 0.5 < r.right()) return model_->blockText(b);
    }
  }
  return model_->segmentText(s);
}

bool SegmentsCanvas::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    const auto* help = static_cast<QHelpEvent*>(event);
    const QString text = textAt(help->pos());
    if (text.isEmpty())
      QToolTip::hideText();
    else
      QToolTip::showText(help->globalPos(), text, this);
    return true;
  }
  return QWidget::event(event);
}

}  // namespace matmulviz::ui
