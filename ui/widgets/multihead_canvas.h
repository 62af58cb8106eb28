#pragma once
// The drawing of the Multi-head view (the multi-head assignment): A1 of one batch row split into
// heads (column blocks, one colour each), the importance mask over [b, s] (P's value as grey, the
// important tokens highlighted), and O3 [t, nh, e] with its rows labelled by token and its
// colour scale.

#include "core/multihead/multihead_report.h"

#include <QWidget>

#include <memory>

namespace matmulviz::ui {

class MultiheadCanvas : public QWidget {
  Q_OBJECT
 public:
  explicit MultiheadCanvas(QWidget* parent = nullptr);
  void setReport(std::shared_ptr<const MultiheadReport> report);
  /// The batch row whose A1 [s, h] is drawn split into heads.
  void setBatch(int batch);
  void setPresentationMode(bool on);
  QSize sizeHint() const override { return {900, 600}; }

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  void drawHeads(QPainter& p, const QRectF& area) const;
  void drawMask(QPainter& p, const QRectF& area) const;
  void drawO3(QPainter& p, const QRectF& area) const;
  /// O3's colour scale: a vertical bar from +maxAbs (red) through 0 (white) to -maxAbs (blue).
  void drawColorScale(QPainter& p, const QRectF& area, double maxAbs) const;
  void title(QPainter& p, const QRectF& area, const QString& text) const;

  std::shared_ptr<const MultiheadReport> report_;
  int batch_ = 0;
  bool presentation_ = false;
};

/// A colour for head `h` of `count` (evenly spaced hues), lighter when `light`.
QColor headColor(int h, int count, bool light = false);

}  // namespace matmulviz::ui
