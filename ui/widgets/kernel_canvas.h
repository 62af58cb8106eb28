#pragma once
// The Kernel view's drawing surface: paints the model's current frame with KernelPainter over a
// cached image of everything static (A, B, the plane of block colours, labels, legend; rebuilt
// only when the launch, the size or the palette changes), reports clicked cells and shows a
// cell's thread in a tooltip.

#include <QImage>
#include <QWidget>
#include <optional>
#include <utility>

#include "ui/models/kernel_launch_model.h"
#include "ui/widgets/kernel_canvas_layout.h"

namespace matmulviz::ui {

class KernelCanvas : public QWidget {
  Q_OBJECT

 public:
  explicit KernelCanvas(const KernelLaunchModel* model, QWidget* parent = nullptr);

  /// Classroom: larger text and the high-contrast palette.
  void setPresentationMode(bool on);
  /// A banner shown over the previous frame while a simulation runs; empty hides it.
  void setBusyText(const QString& text);

  /// Paints the current frame into `painter` over `bounds` (the widget's rect or an image's).
  void render(QPainter& painter, const QRect& bounds);
  /// The current frame at `size`, as renderFrame() gives it.
  QImage renderImage(QSize size);

  /// The layout of the widget's current size (for hit tests).
  KernelCanvasLayout layout() const { return layoutFor(rect()); }
  /// Widget coordinates of the centre of plane cell (row, col); null when no launch.
  QPointF cellCenter(int row, int col) const;

  QSize sizeHint() const override { return {1100, 760}; }
  QSize minimumSizeHint() const override { return {420, 320}; }

 signals:
  /// A click on the thread plane at (row, col) (idle positions included).
  void cellClicked(int row, int col);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  bool event(QEvent* event) override;

 private:
  KernelCanvasLayout layoutFor(const QRect& bounds) const;
  double fontPx(const QRect& bounds) const;
  /// The launch's static layer (KernelPainter::paintStatic) for `layout`, cached.
  const QImage& staticLayer(const KernelCanvasLayout& layout);
  QString tooltipAt(QPointF pos) const;

  const KernelLaunchModel* model_;
  bool presentation_ = false;
  KernelPalette palette_ = KernelPalette::standard();
  QString busy_;
  /// The cached static layer, with what it was drawn for; two sizes (widget and renderFrame).
  struct LayerCache {
    QImage image;
    const KernelLaunchResult* result = nullptr;
    bool presentation = false;
    bool valid = false;
  };
  LayerCache cache_[2];
  int nextCache_ = 0;
};

}  // namespace matmulviz::ui
