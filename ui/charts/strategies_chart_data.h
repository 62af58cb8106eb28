#pragma once
// Internal to ui/charts: what StrategiesChart computes from a RunHistory before drawing (split
// over strategies_chart.cpp, the bars, and strategies_chart_lines.cpp, the lines).

#include "core/util/format_units.h"
#include "ui/charts/strategies_chart.h"
#include "ui/models/run_history.h"

#include <QHash>
#include <QPair>
#include <QVector>

class QCPAbstractPlottable;
class QCPItemText;

namespace matmulviz::ui {

struct StrategiesChart::Impl {
  /// For each plottable: the (entry, result) of each data point, for tooltips.
  QHash<const QCPAbstractPlottable*, QVector<QPair<int, int>>> refs;
  QHash<const QCPAbstractPlottable*, bool> predicted;
  /// The value labels above bars, turned upright after layout when wider than a bar.
  QVector<QCPItemText*> valueLabels;
  double barWidth = 0;  ///< in axis coordinates
};

namespace strategies_chart_detail {

/// Lines over more runs than this have no point markers, and beyond kMaxAntialiasedRuns no
/// antialiasing and thin pens: both keep the replot of a long history under 16 ms.
constexpr int kMaxMarkedRuns = 60;
constexpr int kMaxAntialiasedRuns = 200;

using EntryRef = QPair<int, int>;  ///< (entry, result) indices; (-1, -1) for none
/// An empty history's entries.
const QVector<RunEntry>& noEntries();

/// The metric of one result of run `e` (seconds or MiB); NaN when failed or not measured. The
/// meta device does no arithmetic, so its times (bookkeeping only) are not measured times:
/// NaN for Metric::Time there.
double metricValue(const RunEntry& e, const StrategyResult& r, StrategiesChart::Metric m);
/// True when `e` ran on the meta device: sizes and memory only, no arithmetic to time.
bool bookkeepingOnly(const RunEntry& e);
/// What stands where a bar has no value: "failed", "meta: not timed" or "n/a".
QString missingValueText(const RunEntry& e, const StrategyResult& r, StrategiesChart::Metric m);
/// "2208", "9.48 ms", "44.3 µs"; "—" for NaN.
QString formatValue(double v, StrategiesChart::Metric m);
/// True when `e` ran the same workload (sizes, dtype) on the same device as `reference`: only
/// such runs are compared side by side (a requires_grad setting of another workload would
/// mislead). Any run is comparable when `reference` is nullptr.
bool comparable(const RunEntry& e, const RunEntry* reference);
/// The latest result of `strategy`, among runs comparable with `reference` whose requires_grad
/// is `*setting` (any when nullptr), and with a prediction when `predicted`.
EntryRef latestResult(const QVector<RunEntry>& entries, const QString& strategy,
                      const QString* setting, bool predicted = false,
                      const RunEntry* reference = nullptr);
/// Strategies and requires_grad settings of the runs comparable with `reference` (all when
/// nullptr), in order of first appearance.
void collectKeys(const RunHistory& h, QStringList& strategies, QStringList& settings,
                 const RunEntry* reference = nullptr);

}  // namespace strategies_chart_detail
}  // namespace matmulviz::ui
