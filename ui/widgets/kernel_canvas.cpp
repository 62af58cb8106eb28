#include "ui/widgets/kernel_canvas.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>

#include "ui/widgets/kernel_painter.h"

namespace matmulviz::ui {

KernelCanvas::KernelCanvas(const KernelLaunchModel* model, QWidget* parent)
    : QWidget(parent),
      model_(model),
      liveContent_(std::make_shared<std::atomic<std::uint64_t>>(content_)),
      builder_(new QFutureWatcher<QImage>(this)) {
  setAttribute(Qt::WA_OpaquePaintEvent);
  setMouseTracking(false);
  setFocusPolicy(Qt::ClickFocus);
  setAccessibleName(QStringLiteral("Kernel launch diagram"));
  const auto repaint = [this] { update(); };
  connect(model_, &KernelLaunchModel::stepChanged, this, repaint);
  connect(model_, &KernelLaunchModel::launchChanged, this, [this] {
    contentChanged();
    update();
  });
  connect(model_, &KernelLaunchModel::followChanged, this, repaint);
  connect(builder_, &QFutureWatcher<QImage>::finished, this, &KernelCanvas::layerBuilt);
}

KernelCanvas::~KernelCanvas() {
  // the build holds copies of what it draws and never touches this widget; waiting only keeps
  // it from drawing text after the application (and its fonts) is gone
  liveContent_->store(0);
  builder_->waitForFinished();
}

void KernelCanvas::setPresentationMode(bool on) {
  if (on != presentation_) contentChanged();
  presentation_ = on;
  palette_ = on ? KernelPalette::highContrast() : KernelPalette::standard();
  update();
}

void KernelCanvas::setBusyText(const QString& text) {
  busy_ = text;
  update();
}

void KernelCanvas::contentChanged() {
  ++content_;
  liveContent_->store(content_);
  frameLayer_ = QImage();
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

KernelStaticScene KernelCanvas::sceneFor(const KernelCanvasLayout& layout) const {
  const KernelLaunchResult& r = *model_->result();
  // QFont() is the application's font, read here on the GUI thread
  return {r.geometry, r.run.report.diagnosticCounts.total(), layout, palette_, QFont()};
}

bool KernelCanvas::staticLayerIsCurrent() const {
  return model_->hasLaunch() && !layer_.isNull() && layerKey_ == keyFor(size());
}

void KernelCanvas::requestLayer(const LayerKey& key, const KernelCanvasLayout& layout) {
  if (building_) return;  // layerBuilt() repaints, and that paint asks for the newest size
  building_ = true;
  buildingKey_ = key;
  builder_->setFuture(
      QtConcurrent::run([scene = sceneFor(layout), live = liveContent_, content = key.content] {
        return renderKernelStaticLayer(scene, [&] { return live->load() != content; });
      }));
}

void KernelCanvas::layerBuilt() {
  building_ = false;
  QImage image = builder_->result();
  // a build for an older size of this launch still beats stretching an even older one; one
  // for another launch or mode came back empty or is of no use
  if (!image.isNull() && buildingKey_.content == content_) {
    layer_ = std::move(image);
    layerKey_ = buildingKey_;
  }
  update();  // shows it, and asks for the current size when this one is already stale
}

void KernelCanvas::paintLayer(QPainter& painter, const KernelCanvasLayout& layout) {
  const LayerKey key = keyFor(size());
  if (!layer_.isNull() && layerKey_ == key) {
    painter.drawImage(QPoint(0, 0), layer_);
    return;
  }
  requestLayer(key, layout);
  if (!layer_.isNull() && layerKey_.content == key.content) {
    painter.drawImage(rect(), layer_);  // the previous size, stretched until the new one is in
    return;
  }
  // a new launch: its outline, until the layer is drawn
  const KernelPalette& pal = palette_;
  painter.fillRect(rect(), pal.background);
  painter.fillRect(layout.a, pal.aFill);
  painter.fillRect(layout.b, pal.bFill);
  painter.fillRect(layout.plane, pal.tileEmpty);
  painter.fillRect(layout.c, pal.blocks[1].lighter(115));
  painter.setPen(QPen(pal.text, 1.5));
  painter.drawRect(layout.a);
  painter.drawRect(layout.b);
  painter.drawRect(layout.c);
}

void KernelCanvas::render(QPainter& painter, const QRect& bounds) {
  // layouts start at the origin, as renderImage's image does
  const KernelCanvasLayout layout = layoutFor(QRect(QPoint(0, 0), bounds.size()));
  if (!model_->hasLaunch()) {
    KernelCanvasLayout empty;
    empty.bounds = QRectF(QPointF(0, 0), QSizeF(bounds.size()));
    empty.fontPx = fontPx(bounds);
    KernelPainter(painter, *model_, empty, palette_).paint(QImage(), busy_);
    return;
  }
  const LayerKey key = keyFor(bounds.size());
  if (!layer_.isNull() && layerKey_ == key) {
    painter.drawImage(QPoint(0, 0), layer_);
  } else {
    if (frameLayer_.isNull() || !(frameKey_ == key)) {
      frameLayer_ = renderKernelStaticLayer(sceneFor(layout));
      frameKey_ = key;
    }
    painter.drawImage(QPoint(0, 0), frameLayer_);
  }
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
  if (!model_->hasLaunch()) {
    render(painter, rect());
    return;
  }
  const KernelCanvasLayout layout = layoutFor(rect());
  paintLayer(painter, layout);
  KernelPainter(painter, *model_, layout, palette_).paintDynamic(busy_);
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
