#pragma once
// Clicks on a chart whose x axis is the event index (the Memory view's timeline charts), as
// events: a left click that did not drag (a drag pans) emits `picked` with the event under the
// cursor; setMarkedEvent draws a vertical line at an event, kept across the chart's rebuilds.

#include <QObject>
#include <QPoint>
#include <QPointer>

class QCPItemStraightLine;

namespace matmulviz::ui {

class ChartView;

class EventPicker : public QObject {
  Q_OBJECT
 public:
  /// Watches `chart` (its parent: deleted with it).
  explicit EventPicker(ChartView* chart);

  /// Marks event `x` with a vertical line (x < 0: no line).
  void setMarkedEvent(double x);
  double markedEvent() const { return marked_; }
  /// The event at widget x position `px` of the chart's plot, rounded, at least 0.
  qint64 eventAtPixel(int px) const;

 signals:
  void picked(qint64 event);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void placeMarker();

  ChartView* chart_;
  QPointer<QCPItemStraightLine> marker_;
  QPoint pressedAt_;
  double marked_ = -1;
};

}  // namespace matmulviz::ui
