#include "ui/charts/compare_strategies_chart.h"
#include "ui/charts/diff_colors.h"

#include "core/report/compare_text.h"
#include "core/util/format_units.h"
#include "ui/models/strategies_table_model.h"  // csvField

#include <qcustomplot.h>

#include <cmath>

namespace matmulviz::ui {

CompareStrategiesChart::CompareStrategiesChart(QWidget* parent) : ChartView(parent) {
  rebuild();
}

void CompareStrategiesChart::setComparison(const StrategiesComparison& c, const QString& nameA,
                                           const QString& nameB) {
  comparison_ = c;
  nameA_ = nameA, nameB_ = nameB;
  rebuild();
}

void CompareStrategiesChart::setMetric(Metric m) {
  metric_ = m;
  rebuild();
}

QString CompareStrategiesChart::chartName() const {
  switch (metric_) {
    case Metric::MaxMem:
      return QStringLiteral("compare-strategies-maxmem");
    case Metric::CurMem:
      return QStringLiteral("compare-strategies-curmem");
    case Metric::Time:
      return QStringLiteral("compare-strategies-time");
  }
  return QStringLiteral("compare-strategies");
}

double CompareStrategiesChart::value(const StrategyDiff& d, bool b) const {
  if (!(b ? d.okB : d.okA)) return NAN;
  switch (metric_) {
    case Metric::MaxMem:
      return (b ? d.maxMemB : d.maxMemA) / kMiB;
    case Metric::CurMem:
      return (b ? d.curMemB : d.curMemA) / kMiB;
    case Metric::Time:
      return (b ? d.timeB : d.timeA) * 1e3;
  }
  return NAN;
}

void CompareStrategiesChart::addLabel(double key, double y, const QString& text,
                                      const QColor& color, bool bold) {
  auto* label = new QCPItemText(plot());
  label->setClipToAxisRect(true);
  label->position->setCoords(key, y);
  label->setPositionAlignment(Qt::AlignBottom | Qt::AlignHCenter);
  QFont f = font();
  f.setPointSize(fontPointSize(bold ? 9 : 8));
  f.setBold(bold);
  label->setFont(f);
  label->setColor(color);
  label->setText(text);
}

void CompareStrategiesChart::setupAxes() {
  QCustomPlot* p = plot();
  addTitleAndLegendRows();
  p->legend->setVisible(true);
  const QString what = metric_ == Metric::MaxMem   ? QStringLiteral("maxMem (peak allocated)")
                       : metric_ == Metric::CurMem ? QStringLiteral("curMem (after the statement)")
                                                   : QStringLiteral("median time");
  auto* title = titleElement();
  title->setText(QStringLiteral("%1 per strategy: A (%2) beside B (%3), B − A above")
                     .arg(what, nameA_, nameB_));
  p->yAxis->setLabel(metric_ == Metric::Time ? QStringLiteral("time (ms)")
                                             : QStringLiteral("memory (MiB)"));
  p->xAxis->setLabel(QStringLiteral("strategy"));
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  const auto& rows = comparison_.strategies;
  for (size_t s = 0; s < rows.size(); ++s)
    ticker->addTick(double(s + 1), QString::fromStdString(rows[s].strategy));
  setTextTicks(p->xAxis, ticker);
  p->xAxis->setRange(0.4, double(rows.size()) + 0.6);
}

double CompareStrategiesChart::addBars(int side) {
  const bool time = metric_ == Metric::Time;
  const auto& rows = comparison_.strategies;
  auto* bars = new QCPBars(plot()->xAxis, plot()->yAxis);
  bars->setName(side == 0 ? QStringLiteral("A ") + nameA_ : QStringLiteral("B ") + nameB_);
  bars->setWidth(0.38);
  const QColor c = seriesColor(side == 0 ? 0 : 5);
  bars->setPen(QPen(c.darker(130), presentationMode() ? 2 : 1));
  bars->setBrush(c);
  if (logScale()) bars->setBaseValue(1e-300);
  double top = 0;
  for (size_t s = 0; s < rows.size(); ++s) {
    double v = value(rows[s], side == 1);
    if (logScale() && v <= 0) v = NAN;
    const double key = double(s + 1) + (side == 0 ? -0.2 : 0.2);
    if (!std::isfinite(v)) {
      const bool in = side == 0 ? rows[s].inA : rows[s].inB;
      const bool ok = side == 0 ? rows[s].okA : rows[s].okB;
      addLabel(key, 0,
               !in   ? QStringLiteral("absent")
               : !ok ? QStringLiteral("failed")
                     : QStringLiteral("not measured"),
               Qt::darkGray, false);
      continue;
    }
    bars->addData(key, v);
    top = std::max(top, v);
    lowest_ = std::min(lowest_, v);
    addLabel(key, v,
             time ? QString::fromStdString(formatSeconds(v / 1e3))
                  : QString::fromStdString(formatSize(int64_t(v * kMiB))),
             Qt::black, false);
  }
  return top;
}

void CompareStrategiesChart::rebuild() {
  QCustomPlot* p = plot();
  p->clearPlottables();
  p->clearItems();
  setupAxes();
  lowest_ = 1e300;
  const bool time = metric_ == Metric::Time;
  const auto& rows = comparison_.strategies;
  const double topA = addBars(0);  // A's bars first: the legend reads A, B
  const double top = std::max(topA, addBars(1));
  const double step = std::max(top, 1e-3) * 0.09;
  for (size_t s = 0; s < rows.size(); ++s) {
    const double a = value(rows[s], false), b = value(rows[s], true);
    if (!std::isfinite(a) || !std::isfinite(b)) continue;
    const QString diff = time ? QString::fromStdString(formatSecondsDifference((b - a) / 1e3))
                              : QString::fromStdString(formatSizeDifference(
                                    metric_ == Metric::MaxMem ? rows[s].maxMemDifference()
                                                              : rows[s].curMemDifference()));
    const double y = logScale() ? std::max(a, b) * 1.8 : std::max(a, b) + step;
    addLabel(double(s + 1), y, QStringLiteral("B − A ") + diff,
             b > a   ? growthColor()
             : b < a ? shrinkColor()
                     : Qt::darkGray,
             true);
  }
  if (logScale() && top > 0)  // times that span decades (a loop against a fused kernel)
    p->yAxis->setRange(lowest_ / 3, top * 6);
  else if (logScale())
    p->yAxis->setRange(1e-3, 1);
  else
    p->yAxis->setRange(0, std::max(top, 1e-3) * 1.3);
  setValueScale(p->yAxis, logScale());
  if (rows.empty()) showPlaceholder(QStringLiteral("Compare two strategies reports or two runs"));
  applyStyle();
  p->replot(QCustomPlot::rpQueuedReplot);
}

QString CompareStrategiesChart::csv() const {
  if (comparison_.strategies.empty()) return {};
  const bool time = metric_ == Metric::Time;
  QString out = time ? QStringLiteral("strategy,a_s,b_s,difference_s\n")
                     : QStringLiteral("strategy,a_bytes,b_bytes,difference_bytes\n");
  for (const StrategyDiff& d : comparison_.strategies) {
    auto cell = [&](bool b) -> QString {
      if (!(b ? d.okB : d.okA)) return {};
      if (time) {
        const double s = b ? d.timeB : d.timeA;
        return std::isfinite(s) ? QString::number(s, 'g', 17) : QString();
      }
      const int64_t v =
          metric_ == Metric::MaxMem ? (b ? d.maxMemB : d.maxMemA) : (b ? d.curMemB : d.curMemA);
      return QString::number(v);
    };
    QString diff;
    if (d.okA && d.okB) {
      if (time)
        diff = std::isfinite(d.timeDifference()) ? QString::number(d.timeDifference(), 'g', 17)
                                                 : QString();
      else
        diff = QString::number(metric_ == Metric::MaxMem ? d.maxMemDifference()
                                                         : d.curMemDifference());
    }
    out += QStringLiteral("%1,%2,%3,%4\n")
               .arg(csvField(QString::fromStdString(d.strategy)), cell(false), cell(true), diff);
  }
  return out;
}

}  // namespace matmulviz::ui
