#include "ui/charts/compare_export.h"

#include "ui/charts/chart_export.h"
#include "ui/charts/compare_diff_chart.h"
#include "ui/charts/compare_strategies_chart.h"
#include "ui/charts/compare_timeline_chart.h"
#include "ui/models/memory_timeline_model.h"

#include <QDir>

#include <cmath>

namespace matmulviz::ui {

namespace {

bool anyTime(const StrategiesComparison& s) {
  for (const StrategyDiff& d : s.strategies)
    if (std::isfinite(d.timeA) || std::isfinite(d.timeB)) return true;
  return false;
}

}  // namespace

QStringList exportCompareCharts(const ReportComparison& c, const QString& dir,
                                const QStringList& formats, QString* error, QSize size) {
  QStringList written;
  const QDir out(dir);
  const QString nameA = QString::fromStdString(c.fileA), nameB = QString::fromStdString(c.fileB);
  if (c.hasStrategies) {
    CompareStrategiesChart chart;
    chart.setComparison(c.strategies, nameA, nameB);
    using M = CompareStrategiesChart::Metric;
    for (const M m : {M::MaxMem, M::CurMem, M::Time}) {
      if (m == M::Time && !anyTime(c.strategies)) continue;
      chart.setMetric(m);
      if (!writeChart(chart, out, formats, size, written, error)) return written;
    }
  }
  for (const ComparedTimeline& t : c.timelines) {
    MemoryTimelineModel a, b;
    a.setTimeline(*t.a, QString::fromStdString(t.nameA));
    b.setTimeline(*t.b, QString::fromStdString(t.nameB));
    const QString name = QString::fromStdString(t.name);
    CompareTimelineChart memory;
    memory.setTimelines(&a, nameA, &b, nameB, name);
    if (!writeChart(memory, out, formats, size, written, error)) return written;
    CompareDiffChart diff;
    diff.setRows(t.difference.peakByLabel, QStringLiteral("label at the peak"), name);
    if (!writeChart(diff, out, formats, size, written, error)) return written;
  }
  return written;
}

}  // namespace matmulviz::ui
