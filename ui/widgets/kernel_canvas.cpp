#include "ui/widgets/kernel_canvas.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>

#include "ui/widgets/kernel_painter.h"

namespace matmulviz::ui {

KernelCanvas::KernelCanvas(const KernelLaunchModel* model, QWidget* parent)
    : QWidget(parent), model_(model) {
  setAttribute(Qt::WA_OpaquePaintEvent);
  setMouseTracking(false);
  setFocusPolicy(Qt::ClickFocus);
  setAccessibleName(QStringLiteral("Kernel launch diagram"));
  const auto repaint = [this] { update(); };
  connect(model_, &KernelLaunchModel::stepChanged, this, repaint);
  connect(model_, &KernelLaunchModel::launchChanged, this, [this] {
    for (LayerCache& c : cache_) c.valid = false;  // a new result may reuse a freed address
    update();
  });
  connect(model_, &KernelLaunchModel::followChanged, this, repaint);
}

void KernelCanvas::setPresentationMode(bool on) {
  presentation_ = on;
  palette_ = on ? KernelPalette::highContrast() : KernelPalette::standard();
  update();  // the layer caches are keyed on the mode
}

void KernelCanvas::setBusyText(const QString& text) {
  busy_ = text;
  update();
}

double KernelCanvas::fontPx(const QRect& bounds) const {
  const double base =
      std::clamp(std::min(bounds.height() / 62.0, bounds.width() / 95.0), 10.0, 17.0);
  return presentation_ ? base * 1.4 : base;
}

KernelCanvasLayout KernelCanvas::layoutFor(const QRect& bounds) const {
  if (!model_->hasLaunch()) return {};
  return KernelCanvasLayout::compute(QRectF(bounds), model_->result()->geometry, fontPx(bounds));
}

const QImage& KernelCanvas::staticLayer(const KernelCanvasLayout& layout) {
  const KernelLaunchResult* result = model_->result();
  const QSize size = layout.bounds.size().toSize();
  for (LayerCache& c : cache_) {
    if (c.valid && c.result == result && c.image.size() == size &&
        c.presentation == presentation_) {
      return c.image;
    }
  }
  // repaint into a buffer of the same size when there is one: fresh pages cost more to touch
  // than the whole layer costs to paint
  LayerCache* slot = &cache_[nextCache_];
  for (LayerCache& c : cache_) {
    if (c.image.size() == size) slot = &c;
  }
  if (slot == &cache_[nextCache_]) nextCache_ = 1 - nextCache_;
  if (slot->image.size() != size) slot->image = QImage(size, QImage::Format_ARGB32_Premultiplied);
  QPainter painter(&slot->image);
  KernelPainter(painter, *model_, layout, palette_)
      .paintStatic(renderKernelPlane(result->geometry, layout, palette_));
  slot->result = result;
  slot->presentation = presentation_;
  slot->valid = true;
  return slot->image;
}

void KernelCanvas::render(QPainter& painter, const QRect& bounds) {
  // layouts start at the origin: the widget's rect and renderImage's image both do
  const KernelCanvasLayout layout = layoutFor(QRect(QPoint(0, 0), bounds.size()));
  if (!model_->hasLaunch()) {
    KernelCanvasLayout empty;
    empty.bounds = QRectF(QPointF(0, 0), QSizeF(bounds.size()));
    empty.fontPx = fontPx(bounds);
    KernelPainter(painter, *model_, empty, palette_).paint(QImage(), busy_);
    return;
  }
  painter.drawImage(QPoint(0, 0), staticLayer(layout));
  KernelPainter(painter, *model_, layout, palette_).paintDynamic(busy_);
}

QImage KernelCanvas::renderImage(QSize size) {
  QImage image(size.expandedTo(QSize(1, 1)), QImage::Format_ARGB32_Premultiplied);
  QPainter painter(&image);
  render(painter, QRect(QPoint(0, 0), image.size()));
  return image;
}

QPointF KernelCanvas::cellCenter(int row, int col) const {
  if (!model_->hasLaunch()) return {};
  return layout().cellRect(row, col).center();
}

void KernelCanvas::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  render(painter, rect());
}

void KernelCanvas::mousePressEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton || !model_->hasLaunch()) {
    QWidget::mousePressEvent(event);
    return;
  }
  if (const auto cell = layout().cellAt(event->position())) {
    emit cellClicked(int(cell->first), int(cell->second));
  }
}

QString KernelCanvas::tooltipAt(QPointF pos) const {
  if (!model_->hasLaunch()) return {};
  const auto cell = layout().cellAt(pos);
  if (!cell) return {};
  const KernelGeometry& g = model_->result()->geometry;
  const auto [row, col] = *cell;
  const KernelGeometry::BlockThread bt = g.at(row, col);
  const QString where = g.inC(row, col)
                            ? QStringLiteral("C[%1,%2]").arg(row).arg(col)
                            : QStringLiteral("(%1, %2): outside C, idle").arg(row).arg(col);
  return QStringLiteral("%1\nthread (%2,%3) of block (%4,%5)\nclick to follow it")
      .arg(where)
      .arg(bt.tx)
      .arg(bt.ty)
      .arg(bt.bx)
      .arg(bt.by);
}

bool KernelCanvas::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    const QString tip = tooltipAt(help->pos());
    if (tip.isEmpty()) {
      QToolTip::hideText();
    } else {
      QToolTip::showText(help->globalPos(), tip, this);
    }
    return true;
  }
  return QWidget::event(event);
}

}  // namespace matmulviz::ui
