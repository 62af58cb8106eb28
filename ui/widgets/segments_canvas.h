#pragma once
// The allocator's segments at one event, painted as PyTorch's memory_viz "Allocator State
// History" draws them: each segment a horizontal bar whose length is its size (one scale for
// all: the largest segment spans the width), packed into rows smallest first; inside, its blocks
// to scale: allocated blue up to the requested size and light blue for the rounding above it,
// pending free red, free (cached) white. A label inside a bar that has room (address, size,
// pool, stream). Hovering a block or a segment shows its AllocatorStateModel text (address,
// size, requested size, state, frames). Follows the model's resets.

#include <QVector>
#include <QWidget>

namespace matmulviz::ui {

class AllocatorStateModel;

class SegmentsCanvas : public QWidget {
  Q_OBJECT
 public:
  explicit SegmentsCanvas(const AllocatorStateModel* model, QWidget* parent = nullptr);

  /// The hover text at widget position `pos` (a block's, else a segment's); empty elsewhere.
  QString textAt(const QPoint& pos) const;
  /// Where segment `segment` of the model's state is drawn (empty when none).
  QRectF segmentRect(int segment) const;
  /// Where block `block` (an index of the state's blocks) is drawn.
  QRectF blockRect(int block) const;
  void setPresentationMode(bool on);

  QSize sizeHint() const override { return {700, heightFor(700)}; }
  QSize minimumSizeHint() const override { return {240, kLegendHeight + kRowHeight}; }
  bool hasHeightForWidth() const override { return true; }
  int heightForWidth(int width) const override { return heightFor(width); }

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  bool event(QEvent* event) override;  ///< tooltips

 private:
  static constexpr int kRowHeight = 30;
  static constexpr int kRowGap = 6;
  static constexpr int kLegendHeight = 24;
  static constexpr int kMargin = 8;
  static constexpr int kSegmentGap = 6;  ///< pixels between segments in a row
  void relayout();
  int heightFor(int width) const;
  /// Per segment: its row and x offset in pixels, for `width`; returns the number of rows.
  int pack(int width, QVector<QPointF>* at) const;
  double bytesPerPixel(int width) const;
  void paintLegend(QPainter& p) const;
  void paintSegment(QPainter& p, int segment) const;
  int segmentAt(const QPoint& pos) const;

  const AllocatorStateModel* model_;
  QVector<QPointF> at_;  ///< top-left of each segment's bar
  double scale_ = 0;     ///< pixels per byte
  bool presentation_ = false;
};

}  // namespace matmulviz::ui
