#pragma once
// The Memory view's chart of one run: memory_allocated as filled bands stacked by category
// (inputs, gathered copy, outputs, saved for backward, gradients, other), requested and
// reserved as lines, over the event index; the peak marked and labelled; hover shows the
// event, its op and why the block is alive; drag pans, the wheel zooms (x and y).
// Timelines with more than maxPlottedEvents() events are thinned for drawing: each stretch
// keeps the event where allocated is largest, and the peak event is always kept. Requested and
// reserved are drawn per pixel column: where a line changes within a column (strategy1's
// backward allocates and frees every event), its range there is a shaded band of the line's
// colour under the line of its maxima, not a solid block of vertical strokes.
// "Scale to allocated" (context menu, or the Memory view's checkbox) fits the value axis to
// allocated and says how far reserved goes above; it is on by default when reserved peaks at
// more than four times the allocated peak (a 20 MiB segment over 0.5 MiB of tensors).

#include "ui/charts/chart_view.h"

#include <QPointer>
#include <QVector>

class QCPItemText;

namespace matmulviz::ui {

class MemoryTimelineModel;

class MemoryTimelineChart : public ChartView {
  Q_OBJECT
 public:
  explicit MemoryTimelineChart(QWidget* parent = nullptr);

  /// Follows `model` (not owned; nullptr clears): rebuilds on its modelReset.
  void setModel(const MemoryTimelineModel* model);
  /// About one event per pixel column at the default export width: a band that rises and
  /// falls every event is drawn at its maxima, not as stripes.
  static int maxPlottedEvents() { return 1600; }

  QString chartName() const override;  ///< "memory-timeline-<strategy>", other characters than
                                       ///< [A-Za-z0-9._-] as '-'
  /// event, op, label, category, allocated/requested/reserved MiB, of every event (not thinned).
  QString csv() const override;
  /// The events drawn (after thinning), for tests.
  const QVector<int>& plottedEvents() const { return plotted_; }
  /// Whether the chart labels its peak with `text` ("peak " + the model's peakText()), whole or
  /// elided to the room beside the peak.
  bool showsPeak(const QString& text) const;
  /// Pixel columns the lines are aggregated over (min and max of each).
  static int lineColumns() { return 1600; }

  /// The value axis fits allocated (its peak) rather than reserved. Reset to its default on
  /// each new timeline.
  void setScaleToAllocated(bool on);
  bool scaleToAllocated() const { return scaleToAllocated_; }
  /// On when reserved peaks above 4x the allocated peak.
  bool scaleToAllocatedByDefault() const;

 signals:
  void scaleToAllocatedChanged(bool on);

 protected:
  void rebuild() override;
  /// The event nearest to the mouse's x: model->tooltipAt.
  QString toolTipAt(const QPoint& pos) const override;
  void addMenuActions(QMenu& menu) override;

 private:
  void thin();
  void addBands(const QVector<double>& x);
  void addLines();
  void setValueRange();
  void markPeak();
  /// After each layout: the peak's label centred over the dot where it fits, else on the wider
  /// side, elided to the room there (the header has it all).
  void fitPeakLabel();
  void markStatementEnd();
  void setupAxes();

  QPointer<const MemoryTimelineModel> model_;
  QMetaObject::Connection resetConn_;
  QVector<int> plotted_;             ///< event index of each plotted point
  QPointer<QCPItemText> peakLabel_;  ///< nullptr without a peak
  QString peakText_;                 ///< its whole text
  double peakX_ = 0;
  bool scaleToAllocated_ = false;
};

}  // namespace matmulviz::ui
