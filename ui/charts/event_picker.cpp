#include "ui/charts/event_picker.h"

#include "ui/charts/chart_view.h"

#include <qcustomplot.h>

#include <QMouseEvent>

#include <cmath>

namespace matmulviz::ui {

namespace {

QCustomPlot* plotOf(ChartView* chart) {
  return chart->findChild<QCustomPlot*>();
}

}  // namespace

EventPicker::EventPicker(ChartView* chart) : QObject(chart), chart_(chart) {
  if (QCustomPlot* plot = plotOf(chart)) {
    plot->installEventFilter(this);
    // A rebuild clears the plot's items: the marker comes back before each replot.
    connect(plot, &QCustomPlot::beforeReplot, this, [this] { placeMarker(); });
  }
}

qint64 EventPicker::eventAtPixel(int px) const {
  QCustomPlot* plot = plotOf(chart_);
  if (!plot) return 0;
  const double x = plot->xAxis->pixelToCoord(px);
  return std::isfinite(x) && x > 0 ? qint64(std::llround(std::min(x, 9e15))) : 0;
}

void EventPicker::setMarkedEvent(double x) {
  marked_ = x;
  placeMarker();
  if (QCustomPlot* plot = plotOf(chart_)) plot->replot(QCustomPlot::rpQueuedReplot);
}

void EventPicker::placeMarker() {
  QCustomPlot* plot = plotOf(chart_);
  if (!plot) return;
  if (marked_ < 0) {
    if (marker_) plot->removeItem(marker_);
    return;
  }
  if (!marker_) {
    marker_ = new QCPItemStraightLine(plot);
    QPen pen(QColor(0xb0, 0x7a, 0xa1));
    pen.setWidth(2);
    pen.setStyle(Qt::DashLine);
    marker_->setPen(pen);
    marker_->setSelectable(false);
    marker_->setObjectName("selectedEventMarker");
  }
  marker_->point1->setCoords(marked_, 0);
  marker_->point2->setCoords(marked_, 1);
}

bool EventPicker::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() == QEvent::MouseButtonPress) {
    pressedAt_ = static_cast<QMouseEvent*>(event)->pos();
  } else if (event->type() == QEvent::MouseButtonRelease) {
    const auto* mouse = static_cast<QMouseEvent*>(event);
    if (mouse->button() == Qt::LeftButton && (mouse->pos() - pressedAt_).manhattanLength() <= 4)
      emit picked(eventAtPixel(mouse->pos().x()));
  }
  return QObject::eventFilter(watched, event);
}

}  // namespace matmulviz::ui
