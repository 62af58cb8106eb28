#pragma once
// The Strategies view's chart over the run history: time, curMem or maxMem per strategy, either
// as bars of the latest run of each requires_grad setting side by side, or as one line per
// strategy over the runs. The cost model's predicted GPU time is a separate series labelled
// "model: H200 (predicted)" (time only; the profile's name). Failed strategies are gaps in lines
// and marked "failed" under bars; nothing a history holds makes it throw. Runs on the meta device
// do no arithmetic, so their (bookkeeping) times are left out of the time charts: "meta: not timed"
// where a bar would be, gaps in lines; the prediction, a model of sizes, is still drawn. Only
// series with something drawn are in the legend.

#include "ui/charts/chart_view.h"

#include <QPair>
#include <QPointer>
#include <QVector>

namespace matmulviz::ui {

class RunHistory;

class StrategiesChart : public ChartView {
  Q_OBJECT
 public:
  enum class Metric { Time, CurMem, MaxMem };
  enum class Layout {
    BarsLatest,     ///< bars per strategy: requires_grad settings side by side, latest run each
    LinesOverRuns,  ///< one line per strategy over the history (x = run id)
  };

  explicit StrategiesChart(QWidget* parent = nullptr);
  ~StrategiesChart() override;

  /// Follows `history` (not owned; nullptr clears): rebuilds on appended and reset.
  void setHistory(const RunHistory* history);
  /// Time: median seconds; CurMem / MaxMem: MiB. Turns the log scale on for Time and off for
  /// memory (logScaleChanged tells a view's toggle); setLogScale afterwards overrides it.
  void setMetric(Metric m);
  Metric metric() const { return metric_; }
  void setLayout(Layout l);
  Layout layout() const { return layout_; }

  /// "strategies-time-bars", "strategies-maxmem-lines", ...
  QString chartName() const override;
  /// Every (run, strategy) of the history: run, title, requires_grad, strategy, ok, the metric,
  /// predicted_s.
  QString csv() const override;

  /// Series names: bars "requires_grad: none" (one per setting in the history, in order of
  /// first appearance); lines "strategy1"; time only: the prediction "model: H100 (predicted)"
  /// (bars) or "strategy1, model: H100 (predicted)" (lines, dashed); "failed" marks (lines).
  /// Value labels above bars turned upright at the last layout (too wide for their bar).
  int uprightValueLabels() const;
  static QString metricLabel(Metric m);  ///< "time (s)", "curMem (MiB)", "maxMem (MiB)"
  /// "model: H100 (predicted)" from "NVIDIA H100 SXM (model)".
  static QString predictedSeriesName(const QString& predictedGpu);

 protected:
  void rebuild() override;
  QString toolTipFor(QCPAbstractPlottable* plottable, int dataIndex) const override;

 private:
  struct Impl;
  void rebuildBars();
  void rebuildLines();
  /// Colours `bars` as requires_grad group `group`, or as the prediction when group < 0.
  void styleBars(QCPBars* bars, int group) const;
  /// The value above a bar, or `missing` ("failed", "meta: not timed") where there is none.
  void addValueLabel(double key, double value, const QString& missing);
  /// After layout: value labels wider than their bar stand upright, so neighbours never
  /// overlap ("2.57 ms4.01 ms").
  void fitValueLabels();
  /// Time only: the line the title adds when runs on the meta device are left out.
  QString timeNote() const;
  /// Values written beside the points of one line (a history of one run), predictions in
  /// `color` at the left of their marker, measurements at the right.
  void addPointLabels(const QVector<double>& keys, const QVector<double>& values,
                      const QColor& color, bool predicted);
  /// Crosses near the bottom at the runs (keys) where a strategy failed; refs: (entry, result).
  void addFailedMarks(const QVector<double>& keys, const QVector<QPair<int, int>>& refs);

  QPointer<const RunHistory> history_;
  QMetaObject::Connection appendedConn_, resetConn_;
  Metric metric_ = Metric::Time;
  Layout layout_ = Layout::BarsLatest;
  Impl* impl_;  ///< tooltip and CSV data of the current plot
};

}  // namespace matmulviz::ui
