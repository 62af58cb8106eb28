#pragma once
// The Program view's memory timeline of a Python run: memory_allocated (filled) and
// memory_reserved (a line) over the allocator's events, the peak marked. Linked to the code: a
// click on the chart picks the event there (the highest point within a few pixels, so a click
// on the peak's mark picks the peak) and emits eventClicked; highlightLine() fills the bytes a
// script line has alive at each event, in orange, and marks that line's allocations.
// Timelines longer than the chart is wide are drawn per pixel column (the maximum of each).

#include "ui/charts/chart_view.h"

#include <QVector>

#include <memory>

namespace matmulviz::ui {

class ProgramRun;

class ProgramTimelineChart : public ChartView {
  Q_OBJECT
 public:
  explicit ProgramTimelineChart(QWidget* parent = nullptr);

  /// Shows `run` (nullptr clears); clears the highlighted line and the selected event.
  void setRun(std::shared_ptr<const ProgramRun> run);
  /// Highlights what script line `line` (1-based; 0: none) allocated.
  void highlightLine(int line);
  int highlightedLine() const { return line_; }
  /// Marks event `e` (-1: none) with a vertical line.
  void selectEvent(int e);
  int selectedEvent() const { return selected_; }

  QString chartName() const override { return QStringLiteral("program-timeline"); }
  /// event, kind, allocated and reserved MiB, script line of every event.
  QString csv() const override;

  /// For tests and the view: the plot widget that takes the clicks, where event `e` is drawn on
  /// it (its allocated value), and the event a click at `pos` picks (-1: none).
  QWidget* plotArea() const;
  QPoint pixelOfEvent(int e) const;
  int eventAt(const QPoint& pos) const;
  /// The highest number of points a series is drawn with (one per pixel column beyond it).
  static int maxPoints() { return 2000; }

 signals:
  void eventClicked(int event);

 protected:
  void rebuild() override;
  QString toolTipAt(const QPoint& pos) const override;
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void addSeries(const QString& name, const QVector<qint64>& series, const QColor& pen,
                 const QColor& brush);
  void addLineMarks();
  void markPeak();
  void markSelected();
  void setupAxes();

  std::shared_ptr<const ProgramRun> run_;
  int line_ = 0;
  int selected_ = -1;
  QPoint pressedAt_{-1, -1};
};

}  // namespace matmulviz::ui
