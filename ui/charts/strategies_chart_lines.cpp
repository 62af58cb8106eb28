// StrategiesChart's LinesOverRuns layout: one line per strategy over the run ids, the cost
// model's prediction as a dashed line of the same colour, failures as crosses near the bottom.
#include "ui/charts/strategies_chart.h"
#include "ui/charts/strategies_chart_data.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace matmulviz::ui {

using namespace strategies_chart_detail;

namespace {

/// One line's points and the (entry, result) of each.
struct Line {
  QVector<double> keys, values;
  QVector<EntryRef> refs;
  void add(double key, double value, EntryRef ref) {
    keys << key;
    values << value;
    refs << ref;
  }
};

/// The measured and predicted lines of `strategy`; failures go to `failed`.
struct StrategyLines {
  Line measured, predicted, failed;
  QString gpu;
  double lo = INFINITY, hi = 0;
};

StrategyLines collectLines(const QVector<RunEntry>& entries, const QString& strategy,
                           StrategiesChart::Metric metric, bool log, double dodge) {
  StrategyLines out;
  for (int e = 0; e < entries.size(); ++e) {
    const StrategyResult* r = entries[e].result(strategy);
    if (!r) continue;
    const EntryRef ref{e, static_cast<int>(r - entries[e].results.data())};
    const double key = entries[e].id + dodge;
    double v = metricValue(entries[e], *r, metric);
    if (log && v <= 0) v = NAN;
    out.measured.add(key, v, ref);  // NaN: a gap in the line
    if (std::isfinite(v)) {
      out.lo = std::min(out.lo, v);
      out.hi = std::max(out.hi, v);
    } else if (!r->ok) {
      out.failed.add(key, 0, ref);
    }
    if (metric == StrategiesChart::Metric::Time && std::isfinite(r->predictedS) &&
        r->predictedS > 0) {
      out.predicted.add(key, r->predictedS, ref);
      out.gpu = r->predictedGpu;
      out.lo = std::min(out.lo, r->predictedS);
      out.hi = std::max(out.hi, r->predictedS);
    }
  }
  return out;
}

}  // namespace

void StrategiesChart::rebuildLines() {
  QCustomPlot* p = plot();
  QStringList strategies, settings;
  if (history_) collectKeys(*history_, strategies, settings);
  const auto& entries = history_ ? history_->entries() : noEntries();
  setIntegerTicks(p->xAxis);
  p->xAxis->setLabel(QStringLiteral("run"));
  double lo = INFINITY, hi = 0;
  Line failed;
  // One run: a line has one point, so the strategies stand side by side (dodged) with their
  // values written beside the markers.
  const bool single = entries.size() == 1;
  auto names = QSharedPointer<QCPAxisTickerText>::create();
  for (int s = 0; s < strategies.size(); ++s) {
    const double dodge = single ? 0.8 * ((s + 0.5) / strategies.size() - 0.5) : 0.0;
    if (single) names->addTick(entries.front().id + dodge, strategies[s]);
    const StrategyLines lines = collectLines(entries, strategies[s], metric_, logScale(), dodge);
    lo = std::min(lo, lines.lo);
    hi = std::max(hi, lines.hi);
    for (int i = 0; i < lines.failed.keys.size(); ++i)
      failed.add(lines.failed.keys[i], 0, lines.failed.refs[i]);
    const QColor c = seriesColor(s);
    const bool few = lines.measured.keys.size() <= kMaxAntialiasedRuns;
    const bool marked = lines.measured.keys.size() <= kMaxMarkedRuns;
    const double marker = (presentationMode() ? 7 : 4) * (single ? 2 : 1);
    const bool anyMeasured = std::any_of(lines.measured.values.begin(), lines.measured.values.end(),
                                         [](double v) { return std::isfinite(v); });
    if (anyMeasured) {  // a line of gaps only (meta's times) is neither drawn nor listed
      auto* g = p->addGraph();
      g->setName(strategies[s]);
      g->setPen(QPen(c, few ? lineWidth() : 1.0));  // thin (cosmetic) pens draw fastest
      // Markers only while they can be told apart; beyond that they cost most of the replot.
      if (marked) g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, marker));
      g->setAntialiased(few);
      g->setData(lines.measured.keys, lines.measured.values, true);
      impl_->refs.insert(g, lines.measured.refs);
      if (single) addPointLabels(lines.measured.keys, lines.measured.values, c, false);
    }
    if (lines.predicted.keys.isEmpty()) continue;
    auto* pg = p->addGraph();
    pg->setName(strategies[s] + QStringLiteral(", ") + predictedSeriesName(lines.gpu));
    // Dashed while it is cheap; over a long history a pale solid line (dashes over 1000
    // segments take longer than the whole chart's 16 ms).
    QColor pale = c;
    pale.setAlpha(few ? 255 : 120);
    pg->setPen(QPen(pale, few ? lineWidth() * 0.8 : 1.0, few ? Qt::DashLine : Qt::SolidLine));
    // Hollow diamonds: a prediction at a single run is a point, not an invisible line.
    if (marked) pg->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDiamond, marker * 1.5));
    pg->setAntialiased(few);
    pg->setData(lines.predicted.keys, lines.predicted.values, true);
    impl_->refs.insert(pg, lines.predicted.refs);
    impl_->predicted.insert(pg, true);
    if (single) addPointLabels(lines.predicted.keys, lines.predicted.values, c, true);
  }
  if (single) {  // the strategies side by side: name them
    setTextTicks(p->xAxis, names);
    p->xAxis->setLabel(
        QStringLiteral("strategy (run %1, the only run so far)").arg(entries.front().id));
  }
  p->xAxis->setRange(entries.isEmpty()
                         ? QCPRange(0, 1)
                         : QCPRange(entries.front().id - 0.5, entries.back().id + 0.5));
  if (hi <= 0) {
    p->yAxis->setRange(logScale() ? QCPRange(1e-6, 1) : QCPRange(0, 1));
  } else {
    p->yAxis->setRange(logScale() ? QCPRange(lo / 3, hi * 3) : QCPRange(0, hi * 1.1));
  }
  addFailedMarks(failed.keys, failed.refs);
}

void StrategiesChart::addPointLabels(const QVector<double>& keys, const QVector<double>& values,
                                     const QColor& color, bool predicted) {
  QFont f = font();
  f.setPointSize(fontPointSize(8));
  for (int i = 0; i < keys.size(); ++i) {
    if (!std::isfinite(values[i])) continue;
    auto* label = new QCPItemText(plot());
    label->setClipToAxisRect(true);
    label->setFont(f);
    label->setColor(color.darker(140));
    label->position->setCoords(keys[i], values[i]);
    // Measured values right of their marker, predictions left: the two never cover each other.
    label->setPositionAlignment((predicted ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignVCenter);
    label->setPadding(predicted ? QMargins(0, 0, 10, 0) : QMargins(10, 0, 0, 0));
    QString text = formatValue(values[i], metric_);
    if (metric_ != Metric::Time) text += QStringLiteral(" MiB");
    label->setText(predicted ? text + QStringLiteral(" (model)") : text);
  }
}

void StrategiesChart::addFailedMarks(const QVector<double>& keys, const QVector<EntryRef>& refs) {
  if (keys.isEmpty()) return;
  // Failures sit on a row near the bottom of the axis: the run has no value to plot.
  QCustomPlot* p = plot();
  const QCPRange r = p->yAxis->range();
  const double y =
      logScale() ? r.lower * std::pow(r.upper / r.lower, 0.03) : r.lower + 0.03 * r.size();
  auto* g = p->addGraph();
  g->setName(QStringLiteral("failed"));
  g->setLineStyle(QCPGraph::lsNone);
  g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCross, QPen(QColor(200, 0, 0), 2), QBrush(),
                                     presentationMode() ? 14 : 9));
  std::vector<int> order(keys.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return keys[a] < keys[b]; });
  QVector<double> k, v;
  QVector<EntryRef> sortedRefs;
  for (int i : order) {
    k << keys[i];
    v << y;
    sortedRefs << refs[i];
  }
  g->setData(k, v, true);
  impl_->refs.insert(g, sortedRefs);
}

}  // namespace matmulviz::ui
