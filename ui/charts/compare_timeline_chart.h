#pragma once
// Two memory timelines on one axis (the Compare window's Memory page, `matmulviz-cli compare
// --out`): allocated of A and of B as step lines over the allocator's events, A's filled, their
// reserved as dashed lines, each peak marked and labelled. Timelines of more than lineColumns()
// events are drawn per column at their maxima, so that no peak is lost.

#include "ui/charts/chart_view.h"

#include <QPointer>
#include <QVector>

namespace matmulviz::ui {

class MemoryTimelineModel;

class CompareTimelineChart : public ChartView {
  Q_OBJECT
 public:
  explicit CompareTimelineChart(QWidget* parent = nullptr);

  /// Follows `a` and `b` (not owned; nullptr clears), named `nameA`/`nameB` in the legend;
  /// `title` is the compared timeline ("direct"), used in the chart's name and title.
  void setTimelines(const MemoryTimelineModel* a, const QString& nameA,
                    const MemoryTimelineModel* b, const QString& nameB, const QString& title);
  /// The most columns a line is drawn with (each the maximum of its events).
  static int lineColumns() { return 1600; }

  QString chartName() const override;  ///< "compare-memory-<title>"
  /// event, then allocated and reserved bytes of A and of B (empty past a timeline's end).
  QString csv() const override;

 protected:
  void rebuild() override;

 private:
  void addSide(const MemoryTimelineModel& m, const QString& name, int color, bool fill);
  void markPeak(const MemoryTimelineModel& m, const QString& name, int color, bool above);

  QPointer<const MemoryTimelineModel> a_, b_;
  QString nameA_, nameB_, title_;
};

}  // namespace matmulviz::ui
