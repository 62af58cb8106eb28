#include "ui/charts/heatmap_chart.h"

#include "ui/models/tensor_grid_model.h"

#include <qcustomplot.h>

#include <QMouseEvent>
#include <QPdfWriter>

#include <cmath>

namespace matmulviz::ui {

HeatmapChart::HeatmapChart(QWidget* parent) : ChartView(parent) {
  plot()->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  rebuild();
}

void HeatmapChart::setModel(const TensorGridModel* model) {
  disconnect(resetConn_);
  model_ = model;
  if (model)
    resetConn_ = connect(model, &QAbstractItemModel::modelReset, this, [this] { rebuild(); });
  rebuild();
}

QString HeatmapChart::title() const {
  if (!model_ || model_->rows() == 0) return QStringLiteral("no tensor");
  QString t = model_->name();
  if (model_->sliceCount() > 1)
    t += QStringLiteral(", slice %1 of %2").arg(model_->slice() + 1).arg(model_->sliceCount());
  return t;
}

QString HeatmapChart::chartName() const {
  QString n = model_ ? model_->name() : QString();
  n.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9_.]+")), QStringLiteral("-"));
  return n.isEmpty() ? QStringLiteral("heatmap") : QStringLiteral("heatmap-") + n;
}

QString HeatmapChart::csv() const {
  return model_ ? model_->toCsv() : QString();
}

void HeatmapChart::rebuild() {
  QCustomPlot* p = plot();
  p->clearPlottables();
  p->clearItems();
  if (p->plotLayout()->rowCount() == 1) {
    p->plotLayout()->insertRow(0);
    p->plotLayout()->addElement(0, 0, new QCPTextElement(p, QString()));
    p->plotLayout()->setRowStretchFactor(0, 0.01);
    auto* scale = new QCPColorScale(p);
    p->plotLayout()->addElement(1, 1, scale);
    scale->setType(QCPAxis::atRight);
    auto* group = new QCPMarginGroup(p);
    p->axisRect()->setMarginGroup(QCP::msBottom | QCP::msTop, group);
    scale->setMarginGroup(QCP::msBottom | QCP::msTop, group);
  }
  auto* scale = static_cast<QCPColorScale*>(p->plotLayout()->element(1, 1));
  titleElement()->setText(title());
  p->legend->setVisible(false);
  p->yAxis->setRangeReversed(true);  // row 0 at the top, as a matrix is written
  setIntegerTicks(p->xAxis);
  setIntegerTicks(p->yAxis);
  p->xAxis->setLabel(QStringLiteral("column"));
  p->yAxis->setLabel(QStringLiteral("row"));
  scale->axis()->setLabel(QStringLiteral("value"));
  const int rows = model_ ? model_->rows() : 0, cols = model_ ? model_->cols() : 0;
  if (rows > 0 && cols > 0) {
    rowsPerCell_ = std::max(1, static_cast<int>((qint64(rows) * cols + kMaxCells - 1) / kMaxCells));
    const int cellRows = (rows + rowsPerCell_ - 1) / rowsPerCell_;
    auto* map = new QCPColorMap(p->xAxis, p->yAxis);
    map->setName(model_->name());
    map->setColorScale(scale);
    map->data()->setSize(cols, cellRows);
    map->data()->setRange(QCPRange(0, cols - 1), QCPRange(0, (cellRows - 1) * rowsPerCell_));
    for (int cr = 0; cr < cellRows; ++cr)
      for (int c = 0; c < cols; ++c) {
        double v = 0;
        for (int r = cr * rowsPerCell_; r < std::min(rows, (cr + 1) * rowsPerCell_); ++r) {
          const double x = model_->value(r, c);
          if (std::abs(x) > std::abs(v)) v = x;
        }
        map->data()->setCell(c, cr, v);
      }
    QCPColorGradient gradient;  // diverging, white at 0
    gradient.setColorStopAt(0, QColor(33, 102, 172));
    gradient.setColorStopAt(0.5, QColor(247, 247, 247));
    gradient.setColorStopAt(1, QColor(178, 24, 43));
    map->setGradient(gradient);
    map->setInterpolate(false);
    const double m = std::max({std::abs(model_->minValue()), std::abs(model_->maxValue()), 1e-30});
    map->setDataRange(QCPRange(-m, m));
    p->xAxis->setRange(-0.5, cols - 0.5);
    p->yAxis->setRange(-0.5 * rowsPerCell_, (cellRows - 0.5) * rowsPerCell_);
  } else {
    p->xAxis->setRange(0, 1);
    p->yAxis->setRange(0, 1);
  }
  applyStyle();
  scale->axis()->setTickLabelFont(p->xAxis->tickLabelFont());
  scale->axis()->setLabelFont(p->xAxis->labelFont());
  p->replot(QCustomPlot::rpQueuedReplot);
}

namespace {

/// The cells of `map` as an image, one pixel per cell, row 0 at the top.
QImage cellImage(QCPColorMap* map) {
  QCPColorMapData* d = map->data();
  QImage image(d->keySize(), d->valueSize(), QImage::Format_RGB32);
  QCPColorGradient gradient = map->gradient();
  for (int r = 0; r < d->valueSize(); ++r)
    for (int c = 0; c < d->keySize(); ++c)
      image.setPixel(c, r, gradient.color(d->cell(c, r), map->dataRange()));
  return image;
}

}  // namespace

bool HeatmapChart::writePdf(const QString& path, QSize size) {
  QCustomPlot* p = plot();
  QCPColorMap* map = nullptr;
  for (int i = 0; i < p->plottableCount() && !map; ++i)
    map = qobject_cast<QCPColorMap*>(p->plottable(i));
  if (!map) return ChartView::writePdf(path, size);
  // Everything but the cells (and the grid, which the cells hide on screen) is drawn as
  // vectors over the cells' image. A scratch render lays the plot out at the page's size.
  map->setVisible(false);
  p->xAxis->grid()->setVisible(false);
  p->yAxis->grid()->setVisible(false);
  p->setBackground(Qt::NoBrush);  // the page is white; the frame goes over the cells
  QImage scratch(size, QImage::Format_ARGB32_Premultiplied);
  {
    QCPPainter layout(&scratch);
    p->toPainter(&layout, size.width(), size.height());
  }
  // Each cell is 1 column by rowsPerCell_ rows, centred on its coordinates.
  const int cols = map->data()->keySize(), cellRows = map->data()->valueSize();
  const QRectF cells(
      QPointF(p->xAxis->coordToPixel(-0.5), p->yAxis->coordToPixel(-0.5 * rowsPerCell_)),
      QPointF(p->xAxis->coordToPixel(cols - 0.5),
              p->yAxis->coordToPixel((cellRows - 0.5) * rowsPerCell_)));
  QPdfWriter writer(path);
  writer.setCreator(QStringLiteral("matmulviz"));
  writer.setTitle(chartName());
  writer.setResolution(72);  // one unit is one point, as the size
  writer.setPageLayout(
      QPageLayout(QPageSize(QSizeF(size), QPageSize::Point, QString(), QPageSize::ExactMatch),
                  QPageLayout::Portrait, QMarginsF()));
  QCPPainter painter;
  bool ok = painter.begin(&writer);
  if (ok) {
    painter.setMode(QCPPainter::pmVectorized);
    painter.setMode(QCPPainter::pmNoCaching);
    painter.setMode(QCPPainter::pmNonCosmetic);
    painter.setRenderHint(QPainter::LosslessImageRendering);  // Flate, not JPEG: exact colours
    painter.fillRect(QRect(QPoint(0, 0), size), Qt::white);
    painter.save();
    painter.setClipRect(p->axisRect()->rect());
    painter.setRenderHint(QPainter::SmoothPixmapTransform, false);
    painter.drawImage(cells.normalized(), cellImage(map));
    painter.restore();
    p->toPainter(&painter, size.width(), size.height());
    ok = painter.end();
  }
  map->setVisible(true);
  p->xAxis->grid()->setVisible(true);
  p->yAxis->grid()->setVisible(true);
  p->setBackground(Qt::white);
  return ok;
}

bool HeatmapChart::cellAt(const QPoint& pos, int& row, int& col) const {
  if (!model_ || model_->rows() == 0 || !plot()->axisRect()->rect().contains(pos)) return false;
  col = static_cast<int>(std::lround(plot()->xAxis->pixelToCoord(pos.x())));
  row = static_cast<int>(std::lround(plot()->yAxis->pixelToCoord(pos.y())));
  return row >= 0 && col >= 0 && row < model_->rows() && col < model_->cols();
}

QString HeatmapChart::toolTipAt(const QPoint& pos) const {
  int row = 0, col = 0;
  if (!cellAt(pos, row, col)) return {};
  return QStringLiteral("%1[%2, %3] = %4")
      .arg(model_->name())
      .arg(row)
      .arg(col)
      .arg(QString::number(model_->value(row, col), 'g', 6));
}

bool HeatmapChart::eventFilter(QObject* watched, QEvent* event) {
  if (watched == plot() && event->type() == QEvent::MouseMove) {
    int row = 0, col = 0;
    if (cellAt(static_cast<QMouseEvent*>(event)->pos(), row, col))
      emit hovered(row, col, model_->value(row, col));
  }
  return ChartView::eventFilter(watched, event);
}

}  // namespace matmulviz::ui
