#pragma once
// The Memory view's chart of one run: memory_allocated as filled bands stacked by category
// (inputs, gathered copy, outputs, saved for backward, gradients, other), requested and
// reserved as lines, over the event index; the peak marked and labelled; hover shows the
// event, its op and why the block is alive; drag pans, the wheel zooms (x and y).
// Timelines with more than maxPlottedEvents() events are thinned for drawing: each stretch
// keeps the event where allocated is largest, and the peak event is always kept.

#include "ui/charts/chart_view.h"

#include <QPointer>
#include <QVector>

namespace matmulviz::ui {

class MemoryTimelineModel;

class MemoryTimelineChart : public ChartView {
  Q_OBJECT
 public:
  explicit MemoryTimelineChart(QWidget* parent = nullptr);

  /// Follows `model` (not owned; nullptr clears): rebuilds on its modelReset.
  void setModel(const MemoryTimelineModel* model);
  static int maxPlottedEvents() { return 4000; }

  QString chartName() const override;  ///< "memory-timeline-<strategy>"
  /// event, op, label, category, allocated/requested/reserved MiB, of every event (not thinned).
  QString csv() const override;
  /// The events drawn (after thinning), for tests.
  const QVector<int>& plottedEvents() const { return plotted_; }

 protected:
  void rebuild() override;
  /// The event nearest to the mouse's x: model->tooltipAt.
  QString toolTipAt(const QPoint& pos) const override;

 private:
  void thin();
  void addBands(const QVector<double>& x);
  void addLines(const QVector<double>& x);
  void markPeak();
  void markStatementEnd();
  void setupAxes();

  QPointer<const MemoryTimelineModel> model_;
  QMetaObject::Connection resetConn_;
  QVector<int> plotted_;  ///< event index of each plotted point
};

}  // namespace matmulviz::ui
