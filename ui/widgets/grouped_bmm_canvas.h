#pragma once
// The picture of GroupedBmmPanel (see there): one row of cells per array of kernel 08's
// bucketing, coloured by bucket, then the chosen block's shared tile and its items.

#include <QRect>
#include <QWidget>
#include <memory>
#include <vector>

#include "ui/models/grouped_bmm_picture.h"

namespace matmulviz::ui {

class GroupedBmmCanvas : public QWidget {
  Q_OBJECT

 public:
  explicit GroupedBmmCanvas(QWidget* parent = nullptr);

  void setPicture(std::shared_ptr<const GroupedBmmPicture> picture);
  std::shared_ptr<const GroupedBmmPicture> picture() const { return picture_; }
  /// Clamped to 0..table-1.
  void selectBlock(int m);
  int selectedBlock() const { return block_; }
  /// The bucket whose cell (counts, offsets or a bracket of rows) is at `p`, or -1.
  int bucketAt(QPoint p) const;
  /// Paints the picture into `painter` over `size` (the widget's paintEvent and renderImage).
  void paint(QPainter& painter, QSize size) const;

  QSize sizeHint() const override { return {1100, 640}; }
  QSize minimumSizeHint() const override { return {640, 480}; }

 signals:
  void blockSelected(int m);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;

 private:
  struct Geometry;
  Geometry layout(QSize size) const;

  std::shared_ptr<const GroupedBmmPicture> picture_;
  int block_ = 0;
};

}  // namespace matmulviz::ui
