#pragma once
// The speed ladder: one horizontal bar per rung (slowest at the top), time on a log axis in
// seconds, each rung labelled with its speed-up over the rung before ("x3.2"). Failed rungs
// are listed with their note ("skipped: ...") or "failed", and no bar.

#include "kernels/ladder.h"
#include "ui/charts/chart_view.h"

#include <QVector>

namespace matmulviz::ui {

class LadderChart : public ChartView {
  Q_OBJECT
 public:
  struct Rung {
    QString name;                    ///< "naive", "strategy1"
    double seconds = 0;              ///< measured (or predicted) time; <= 0 or NaN: no bar
    double speedupOverPrevious = 0;  ///< previous.seconds / seconds; <= 0 or NaN: no label
    bool ok = true;
    QString note;  ///< shown in the tooltip and CSV
  };

  explicit LadderChart(QWidget* parent = nullptr);

  void setRungs(const QVector<Rung>& rungs);
  const QVector<Rung>& rungs() const { return rungs_; }
  /// Rungs from (name, seconds, ok) in the given order, speed-ups computed from neighbours.
  static QVector<Rung> rungsFromTimes(const QVector<Rung>& ordered);
  /// The rungs of the lesson's ladder (kernels::runLadder): skipped rungs keep their reason
  /// ("skipped: no CUDA device ..."); a rung's note says what ran and its rate, formatted by
  /// core/util/format_units.h ("one sgemm (8.15 T FLOP/s)").
  static QVector<Rung> rungsFromLadder(const kernels::LadderReport& report);

  /// "speed-ladder" (the Kernel view's ladder of the lesson's product) unless set: the export
  /// names its ranking of the strategies "strategies-ranking", so one name means one chart.
  QString chartName() const override { return chartName_; }
  void setChartName(const QString& name) { chartName_ = name; }
  /// The title above the bars; "speed ladder: slowest at the top, ..." unless set.
  void setTitle(const QString& title);
  QString csv() const override;  ///< rung, seconds, speedup_over_previous, ok, note

 protected:
  void rebuild() override;
  QString toolTipFor(QCPAbstractPlottable* plottable, int dataIndex) const override;

 private:
  QVector<Rung> rungs_;
  QString chartName_ = QStringLiteral("speed-ladder");
  QString title_ = QStringLiteral("speed ladder: slowest at the top, speed-up over the rung above");
};

}  // namespace matmulviz::ui
