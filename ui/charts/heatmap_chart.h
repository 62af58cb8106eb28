#pragma once
// The Gradients view's heatmap of one slice of a tensor (TensorGridModel): a QCPColorMap with a
// QCPColorScale, a diverging palette centred on 0, a title ("dA, strategy1, slice 3 of 128"),
// and the value under the cursor (signal hovered and tooltip). Rows go down, columns across,
// as a matrix is written.

#include "ui/charts/chart_view.h"

#include <QPointer>

namespace matmulviz::ui {

class TensorGridModel;

class HeatmapChart : public ChartView {
  Q_OBJECT
 public:
  explicit HeatmapChart(QWidget* parent = nullptr);

  /// Follows `model` (not owned; nullptr clears): rebuilds on its modelReset (slice change).
  void setModel(const TensorGridModel* model);
  /// "dA, strategy1, slice 3 of 128" (slice shown 1-based); the model's name for one slice.
  QString title() const;

  QString chartName() const override;  ///< "heatmap-<name>" with spaces and commas as '-'
  QString csv() const override;        ///< the model's toCsv()
  bool supportsLogScale() const override { return false; }

 signals:
  /// The cell under the mouse (row, col of the slice) and its value.
  void hovered(int row, int col, double value);

 protected:
  void rebuild() override;
  QString toolTipAt(const QPoint& pos) const override;
  bool eventFilter(QObject* watched, QEvent* event) override;
  /// Axes, labels and colour scale as vectors; the cells as one embedded image of one pixel per
  /// cell, scaled without smoothing (QCustomPlot's own PDF embeds the map at 3x the page's
  /// pixels: megabytes per heatmap).
  bool writePdf(const QString& path, QSize size) override;

 private:
  /// Cell (row, col) at widget position `pos`; false outside the map.
  bool cellAt(const QPoint& pos, int& row, int& col) const;

  /// Slices above this many cells are drawn with rows merged (each cell shows the value of
  /// largest magnitude among the rows it covers); hover still reads the exact value.
  static constexpr int kMaxCells = 1 << 21;

  QPointer<const TensorGridModel> model_;
  int rowsPerCell_ = 1;
  QMetaObject::Connection resetConn_;
};

}  // namespace matmulviz::ui
