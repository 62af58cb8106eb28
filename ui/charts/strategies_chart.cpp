#include "ui/charts/strategies_chart.h"

#include "ui/charts/strategies_chart_data.h"

#include "ui/models/run_history.h"
#include "ui/models/strategies_table_model.h"  // csvField

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace matmulviz::ui {

using namespace strategies_chart_detail;

StrategiesChart::StrategiesChart(QWidget* parent) : ChartView(parent), impl_(new Impl) {
  connect(plot(), &QCustomPlot::afterLayout, this, &StrategiesChart::fitValueLabels);
  setMetric(Metric::Time);
  rebuild();
}

StrategiesChart::~StrategiesChart() {
  delete impl_;
}

void StrategiesChart::setHistory(const RunHistory* history) {
  disconnect(appendedConn_);
  disconnect(resetConn_);
  history_ = history;
  if (history) {
    appendedConn_ = connect(history, &RunHistory::appended, this, [this] { rebuild(); });
    resetConn_ = connect(history, &RunHistory::reset, this, [this] { rebuild(); });
  }
  rebuild();
}

void StrategiesChart::setMetric(Metric m) {
  metric_ = m;
  // Times span decades (a fused kernel vs a Python loop, and the model's microseconds).
  const bool log = m == Metric::Time;
  if (log != logScale()) {
    setLogScale(log);  // rebuilds
  } else {
    rebuild();
  }
}

void StrategiesChart::setLayout(Layout l) {
  layout_ = l;
  rebuild();
}

QString StrategiesChart::metricLabel(Metric m) {
  switch (m) {
    case Metric::Time:
      return QStringLiteral("time, median (s)");
    case Metric::CurMem:
      return QStringLiteral("curMem (MiB)");
    case Metric::MaxMem:
      return QStringLiteral("maxMem (MiB)");
  }
  return {};
}

QString StrategiesChart::predictedSeriesName(const QString& predictedGpu) {
  QString gpu = predictedGpu;
  gpu.remove(QStringLiteral("NVIDIA "));
  gpu = gpu.section(QLatin1Char(' '), 0, 0);
  return QStringLiteral("model: %1 (predicted)").arg(gpu.isEmpty() ? QStringLiteral("GPU") : gpu);
}

QString StrategiesChart::chartName() const {
  static const char* const metrics[] = {"time", "curmem", "maxmem"};
  return QStringLiteral("strategies-%1-%2")
      .arg(QLatin1String(metrics[static_cast<int>(metric_)]),
           layout_ == Layout::BarsLatest ? QStringLiteral("bars") : QStringLiteral("lines"));
}

void StrategiesChart::rebuild() {
  QCustomPlot* p = plot();
  p->clearPlottables();
  p->clearItems();
  impl_->refs.clear();
  impl_->predicted.clear();
  impl_->valueLabels.clear();  // deleted by clearItems
  if (p->plotLayout()->rowCount() == 1) {
    p->plotLayout()->insertRow(0);
    p->plotLayout()->addElement(0, 0, new QCPTextElement(p, QString()));
    p->plotLayout()->addElement(2, 0, p->legend);  // legend below the axis rect
    p->plotLayout()->setRowStretchFactor(0, 0.01);
    p->plotLayout()->setRowStretchFactor(2, 0.01);
    p->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    p->legend->setWrap(4);
  }
  p->legend->setVisible(true);
  QCPAxis* y = p->yAxis;
  y->setLabel(metricLabel(metric_));
  // Log first, so that the bars and failure marks are placed on a log axis; ticks after.
  y->setScaleType(logScale() ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
  if (layout_ == Layout::BarsLatest) {
    rebuildBars();
  } else {
    rebuildLines();
  }
  setValueScale(y, logScale());
  auto* title = titleElement();
  // Two lines: the charts sit side by side in the Strategies view, each half as wide.
  title->setText(QStringLiteral("%1 per strategy\n%2%3")
                     .arg(metricLabel(metric_).section(QLatin1String(" ("), 0, 0),
                          layout_ == Layout::BarsLatest
                              ? QStringLiteral("latest run of each requires_grad setting")
                              : QStringLiteral("over the runs of this session"),
                          timeNote()));
  applyStyle();
  p->replot(QCustomPlot::rpQueuedReplot);
}

void StrategiesChart::rebuildBars() {
  QCustomPlot* p = plot();
  QStringList strategies, settings;
  const auto& entries = history_ ? history_->entries() : noEntries();
  // Bars compare the requires_grad settings of the latest run's workload only.
  const RunEntry* reference = nullptr;
  for (int e = int(entries.size()) - 1; e >= 0 && !reference; --e)
    if (!entries[e].results.isEmpty()) reference = &entries[e];
  if (history_) collectKeys(*history_, strategies, settings, reference);
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  for (int s = 0; s < strategies.size(); ++s) ticker->addTick(s + 1, strategies[s]);
  setTextTicks(p->xAxis, ticker);
  p->xAxis->setLabel(QStringLiteral("strategy"));
  p->xAxis->setRange(0.4, strategies.size() + 0.6);
  // One group per requires_grad setting, and the cost model's prediction (time only) beside.
  QVector<QVector<EntryRef>> groups;
  for (const QString& setting : settings) {
    QVector<EntryRef> refs;
    for (const QString& s : strategies)
      refs << latestResult(entries, s, &setting, false, reference);
    groups << refs;
  }
  bool anyPredicted = false;
  if (metric_ == Metric::Time) {
    QVector<EntryRef> refs;
    for (const QString& s : strategies) {
      refs << latestResult(entries, s, nullptr, true, reference);
      anyPredicted = anyPredicted || refs.back().first >= 0;
    }
    if (anyPredicted) groups << refs;
  }
  const double width = 0.8 / std::max<qsizetype>(1, groups.size());
  impl_->barWidth = width;
  double lo = INFINITY, hi = 0;
  for (int g = 0; g < groups.size(); ++g) {
    const bool predicted = anyPredicted && g == groups.size() - 1;
    auto* bars = new QCPBars(p->xAxis, p->yAxis);
    bars->setWidth(width);
    styleBars(bars, predicted ? -1 : g);
    QVector<EntryRef> refs;
    QString gpu;
    for (int s = 0; s < strategies.size(); ++s) {
      const EntryRef ref = groups[g][s];
      if (ref.first < 0) continue;
      const RunEntry& entry = entries[ref.first];
      const StrategyResult& res = entry.results[ref.second];
      double v = predicted ? res.predictedS : metricValue(entry, res, metric_);
      if (predicted) gpu = res.predictedGpu;
      if (logScale() && v <= 0) v = NAN;
      const double key = s + 1 + (g - (groups.size() - 1) / 2.0) * width;
      if (std::isfinite(v)) {
        bars->addData(key, v);
        refs.append(ref);
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
      addValueLabel(key, v, missingValueText(entry, res, metric_));
    }
    if (bars->data()->isEmpty()) {  // nothing drawn (meta's times, all failed): no legend entry
      p->removePlottable(bars);
      continue;
    }
    bars->setName(predicted ? predictedSeriesName(gpu)
                            : QStringLiteral("requires_grad: %1").arg(settings[g]));
    impl_->refs.insert(bars, refs);
    if (predicted) impl_->predicted.insert(bars, true);
  }
  if (hi <= 0) {
    p->yAxis->setRange(logScale() ? QCPRange(1e-6, 1) : QCPRange(0, 1));
  } else if (logScale()) {
    p->yAxis->setRange(lo / 3, hi * 4);
  } else {
    p->yAxis->setRange(0, hi * 1.15);
  }
}

void StrategiesChart::styleBars(QCPBars* bars, int group) const {
  const int penWidth = presentationMode() ? 2 : 1;
  if (group < 0) {  // the model's prediction: hatched grey, unlike any measurement
    bars->setPen(QPen(QColor(60, 60, 60), penWidth));
    bars->setBrush(QBrush(QColor(90, 90, 90), Qt::BDiagPattern));
  } else {
    const QColor c = seriesColor(group);
    bars->setPen(QPen(c.darker(130), penWidth));
    bars->setBrush(c);
  }
  if (logScale()) bars->setBaseValue(1e-300);
}

void StrategiesChart::addValueLabel(double key, double value, const QString& missing) {
  auto* label = new QCPItemText(plot());
  label->setClipToAxisRect(true);
  QFont f = font();
  f.setPointSize(fontPointSize(8));
  label->setFont(f);
  label->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
  if (std::isfinite(value)) {
    label->position->setCoords(key, value);
    label->setText(formatValue(value, metric_));
    impl_->valueLabels << label;
    return;
  }
  label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
  label->position->setCoords(key, 0.97);
  label->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);  // upright, reading upwards
  const bool failed = missing == QLatin1String("failed");
  label->setColor(failed ? QColor(200, 0, 0) : QColor(90, 90, 90));
  label->setText(missing);
  label->setRotation(-90);
}

void StrategiesChart::fitValueLabels() {
  if (impl_->valueLabels.isEmpty()) return;
  const QCPAxis* x = plot()->xAxis;
  const double barPx = std::abs(x->coordToPixel(impl_->barWidth) - x->coordToPixel(0));
  // All upright or none: the widest label decides, with a gap between neighbours.
  double widest = 0;
  for (QCPItemText* label : impl_->valueLabels)
    widest = std::max(widest, QFontMetricsF(label->font()).horizontalAdvance(label->text()));
  const bool upright = widest + 10 > barPx;
  for (QCPItemText* label : impl_->valueLabels) {
    label->setRotation(upright ? -90 : 0);
    // Upright: the text reads upwards from just above the bar.
    label->setPositionAlignment(upright ? Qt::AlignLeft | Qt::AlignVCenter
                                        : Qt::AlignHCenter | Qt::AlignBottom);
    label->setPadding(upright ? QMargins(3, 0, 0, 0) : QMargins());
  }
}

int StrategiesChart::uprightValueLabels() const {
  return static_cast<int>(std::count_if(impl_->valueLabels.begin(), impl_->valueLabels.end(),
                                        [](QCPItemText* t) { return t->rotation() != 0; }));
}

QString StrategiesChart::timeNote() const {
  if (metric_ != Metric::Time || !history_) return {};
  const auto& entries = history_->entries();
  if (layout_ == Layout::LinesOverRuns)
    return std::any_of(entries.begin(), entries.end(), bookkeepingOnly)
               ? QStringLiteral("\n(meta runs: not timed)")
               : QString();
  // Bars compare runs of the latest run's device only.
  for (auto e = entries.rbegin(); e != entries.rend(); ++e)
    if (!e->results.isEmpty())
      return bookkeepingOnly(*e) ? QStringLiteral("\n(meta: no arithmetic, not timed)") : QString();
  return {};
}

QString StrategiesChart::toolTipFor(QCPAbstractPlottable* plottable, int dataIndex) const {
  const auto it = impl_->refs.constFind(plottable);
  if (!history_ || it == impl_->refs.constEnd() || dataIndex < 0 || dataIndex >= it->size())
    return {};
  const auto [e, r] = it->at(dataIndex);
  if (e >= history_->size() || r >= history_->entries()[e].results.size()) return {};
  const RunEntry& entry = history_->entries()[e];
  const StrategyResult& res = entry.results[r];
  QString text = QStringLiteral("%1, run %2 (%3), requires_grad %4\n")
                     .arg(res.strategy)
                     .arg(entry.id)
                     .arg(entry.title, entry.requiresGrad);
  if (impl_->predicted.value(plottable)) {
    return text + QStringLiteral(
                      "predicted forward time on %1: %2 (%3-bound; a model, not a "
                      "measurement)")
                      .arg(res.predictedGpu, formatValue(res.predictedS, Metric::Time),
                           res.predictedBound);
  }
  if (!res.ok) return text + QStringLiteral("failed: ") + res.error;
  text += QStringLiteral("time %1, curMem %2 MiB, maxMem %3 MiB")
              .arg(bookkeepingOnly(entry)
                       ? QStringLiteral("not measured (meta device: bookkeeping only, no "
                                        "arithmetic)")
                       : formatValue(res.timeMedianS, Metric::Time))
              .arg(res.curMemBytes / kMiB, 0, 'f', 1)
              .arg(res.maxMemBytes / kMiB, 0, 'f', 1);
  for (const auto& k : res.keptAlive)
    text += QStringLiteral("\nkept: %1, %2 MiB, %3")
                .arg(k.label)
                .arg(k.bytes / kMiB, 0, 'f', 1)
                .arg(k.why);
  return text;
}

QString StrategiesChart::csv() const {
  if (!history_ || history_->size() == 0) return {};
  QString out = QStringLiteral("run,title,requires_grad,strategy,ok,%1,predicted_s\n")
                    .arg(metric_ == Metric::Time     ? QStringLiteral("time_median_s")
                         : metric_ == Metric::CurMem ? QStringLiteral("cur_mem_mib")
                                                     : QStringLiteral("max_mem_mib"));
  for (const RunEntry& e : history_->entries())
    for (const StrategyResult& r : e.results) {
      const double v = metricValue(e, r, metric_);
      out += QStringLiteral("%1,%2,%3,%4,%5,%6,%7\n")
                 .arg(e.id)
                 .arg(csvField(e.title), csvField(e.requiresGrad), csvField(r.strategy),
                      r.ok ? QStringLiteral("true") : QStringLiteral("false"),
                      std::isfinite(v) ? QString::number(v, 'g', 17) : QString(),
                      std::isfinite(r.predictedS) ? QString::number(r.predictedS, 'g', 17)
                                                  : QString());
    }
  return out;
}

}  // namespace matmulviz::ui
