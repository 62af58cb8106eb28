#pragma once
// The Memory view's chart of a timeline kept on disk (core/io/timeline_store.h): millions of
// events drawn at level of detail. Each redraw asks the store for the visible event range at
// the plot's width in pixels and draws, per pixel column, allocated as a band from its minimum
// to its maximum with a line along the maximum, and reserved and requested at their maxima;
// never every event. The peak is marked and labelled; hover shows the event under the cursor
// (kind, size, address, stack's innermost frame, counters) and the column's range; drag pans
// and the wheel zooms along the events.

#include "ui/charts/chart_view.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace matmulviz::store {
class TimelineStore;
struct Bucket;
}  // namespace matmulviz::store

class QCPFinancial;

namespace matmulviz::ui {

class BigTimelineChart : public ChartView {
  Q_OBJECT
 public:
  explicit BigTimelineChart(QWidget* parent = nullptr);
  ~BigTimelineChart() override;

  /// Shows `device` of `store` (nullptr clears), its whole range.
  void setStore(std::shared_ptr<const store::TimelineStore> store, int64_t device);
  /// The visible event range [first, last) (x axis), clamped to the timeline.
  void setVisibleRange(double first, double last);
  QString chartName() const override;  ///< "memory-timeline-cuda-0"
  /// The drawn columns: first and last event, allocated min and max, reserved max (MiB).
  QString csv() const override;
  bool supportsLogScale() const override { return false; }
  /// Pixel columns drawn by the last refresh (for tests and the benchmark).
  int columnCount() const;
  /// Milliseconds the last refresh spent querying the store and filling the graphs.
  double lastQueryMs() const { return queryMs_; }
  /// The text of the hover at event `index` (what toolTipAt shows there).
  QString eventText(int64_t index) const;

 protected:
  void rebuild() override;
  QString toolTipAt(const QPoint& pos) const override;

 private:
  /// Queries the visible range at the plot's width; replots unless called from within one.
  void refresh(bool replot = true);
  void markPeak();
  void alignPeakLabel(double lo, double hi);
  void setTitle();

  std::shared_ptr<const store::TimelineStore> store_;
  int64_t device_ = 0;
  int64_t events_ = 0;
  std::vector<store::Bucket> columns_;
  QCPFinancial* band_ = nullptr;  ///< allocated's min-max per column; owned by the plot
  double queryMs_ = 0;
  int pixels_ = 0;  ///< the width the columns were made for
  bool refreshing_ = false;
};

}  // namespace matmulviz::ui
