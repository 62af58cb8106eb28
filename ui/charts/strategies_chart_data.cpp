#include "ui/charts/strategies_chart_data.h"

#include <cmath>
#include <limits>

namespace matmulviz::ui::strategies_chart_detail {

bool bookkeepingOnly(const RunEntry& e) {
  return e.device == QLatin1String("meta");
}

double metricValue(const RunEntry& e, const StrategyResult& r, StrategiesChart::Metric m) {
  if (!r.ok) return std::numeric_limits<double>::quiet_NaN();
  if (m == StrategiesChart::Metric::Time && bookkeepingOnly(e))
    return std::numeric_limits<double>::quiet_NaN();
  switch (m) {
    case StrategiesChart::Metric::Time:
      return r.timeMedianS;
    case StrategiesChart::Metric::CurMem:
      return r.curMemBytes / kMiB;
    case StrategiesChart::Metric::MaxMem:
      return r.maxMemBytes / kMiB;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

QString missingValueText(const RunEntry& e, const StrategyResult& r, StrategiesChart::Metric m) {
  if (!r.ok) return QStringLiteral("failed");
  if (m == StrategiesChart::Metric::Time && bookkeepingOnly(e))
    return QStringLiteral("meta: not timed");
  return QStringLiteral("n/a");
}

QString formatValue(double v, StrategiesChart::Metric m) {
  if (!std::isfinite(v)) return QStringLiteral("—");
  if (m != StrategiesChart::Metric::Time) return QString::number(v, 'f', v < 10 ? 1 : 0);
  // three significant digits in the unit that keeps them below 1000 once rounded: 999.7 us is
  // "1 ms", not "1e+03 µs"
  if (v * 1e6 < 999.5) return QString::number(v * 1e6, 'g', 3) + QStringLiteral(" µs");
  if (v * 1e3 < 999.5) return QString::number(v * 1e3, 'g', 3) + QStringLiteral(" ms");
  if (v < 999.5) return QString::number(v, 'g', 3) + QStringLiteral(" s");
  return QString::number(v, 'f', 0) + QStringLiteral(" s");
}

const QVector<RunEntry>& noEntries() {
  static const QVector<RunEntry> none;
  return none;
}

/// The latest result of `strategy`, among runs whose requires_grad is `*setting` (any when
/// nullptr), and with a prediction when `predicted`.
bool comparable(const RunEntry& e, const RunEntry* reference) {
  return !reference || (e.workload == reference->workload && e.device == reference->device &&
                        e.dtype == reference->dtype);
}

EntryRef latestResult(const QVector<RunEntry>& entries, const QString& strategy,
                      const QString* setting, bool predicted, const RunEntry* reference) {
  for (int e = static_cast<int>(entries.size()) - 1; e >= 0; --e) {
    if (setting && entries[e].requiresGrad != *setting) continue;
    if (!comparable(entries[e], reference)) continue;
    const StrategyResult* r = entries[e].result(strategy);
    if (!r || (predicted && !(std::isfinite(r->predictedS) && r->predictedS > 0))) continue;
    return {e, static_cast<int>(r - entries[e].results.data())};
  }
  return {-1, -1};
}

/// Strategies and requires_grad settings in order of first appearance.
void collectKeys(const RunHistory& h, QStringList& strategies, QStringList& settings,
                 const RunEntry* reference) {
  for (const RunEntry& e : h.entries()) {
    if (!comparable(e, reference)) continue;
    if (!settings.contains(e.requiresGrad)) settings << e.requiresGrad;
    for (const StrategyResult& r : e.results)
      if (!strategies.contains(r.strategy)) strategies << r.strategy;
  }
}

}  // namespace matmulviz::ui::strategies_chart_detail
