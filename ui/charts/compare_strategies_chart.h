#pragma once
// Two strategies reports side by side (the Compare window's Strategies page, `matmulviz-cli
// compare --out`): per strategy, A's bar beside B's for maxMem, curMem or the median time, each
// with its value, and B - A written above the pair.

#include "core/report/compare.h"
#include "ui/charts/chart_view.h"

namespace matmulviz::ui {

class CompareStrategiesChart : public ChartView {
  Q_OBJECT
 public:
  enum class Metric { MaxMem, CurMem, Time };
  explicit CompareStrategiesChart(QWidget* parent = nullptr);

  /// Copies `c`; `nameA`/`nameB` name the two sides in the legend. An empty comparison clears.
  void setComparison(const StrategiesComparison& c, const QString& nameA, const QString& nameB);
  void setMetric(Metric m);
  Metric metric() const { return metric_; }

  QString chartName() const override;  ///< "compare-strategies-maxmem", "-curmem", "-time"
  /// strategy, then A, B and B - A in bytes or seconds (empty where not measured).
  QString csv() const override;

 protected:
  void rebuild() override;

 private:
  /// The metric of one side in MiB or ms; NaN when not measured.
  double value(const StrategyDiff& d, bool b) const;
  void addLabel(double key, double y, const QString& text, const QColor& color, bool bold);
  /// The title, axis labels and the strategies' ticks.
  void setupAxes();
  /// Side 0 (A) or 1 (B): its bars and their values; returns the highest bar.
  double addBars(int side);

  StrategiesComparison comparison_;
  QString nameA_, nameB_;
  Metric metric_ = Metric::MaxMem;
  double lowest_ = 1e300;  ///< the lowest bar drawn (for a log scale's range)
};

}  // namespace matmulviz::ui
