#include "ui/charts/chart_export.h"

#include "ui/charts/heatmap_chart.h"
#include "ui/charts/ladder_chart.h"
#include "ui/charts/memory_timeline_chart.h"
#include "ui/charts/strategies_chart.h"
#include "ui/models/memory_timeline_model.h"
#include "ui/models/qstring_of.h"
#include "ui/models/run_history.h"
#include "ui/models/tensor_grid_model.h"

#include <QDir>
#include <QSaveFile>

#include <algorithm>
#include <memory>

namespace matmulviz::ui {

bool writeChart(ChartView& chart, const QDir& dir, const QStringList& formats, QSize size,
                QStringList& written, QString* error) {
  for (const QString& format : formats) {
    const QString path = dir.filePath(chart.chartName() + QLatin1Char('.') + format);
    if (format == QLatin1String("csv")) {
      const QString text = chart.csv();
      if (text.isEmpty()) continue;
      QSaveFile f(path);
      if (!f.open(QIODevice::WriteOnly) || f.write(text.toUtf8()) < 0 || !f.commit()) {
        if (error) *error = path + QStringLiteral(": ") + f.errorString();
        return false;
      }
    } else if (format == QLatin1String("png") || format == QLatin1String("svg") ||
               format == QLatin1String("pdf")) {
      if (!chart.exportTo(path, size, error)) return false;
    } else {
      continue;
    }
    written << path;
  }
  return true;
}

namespace {

/// The strategies of `report` that ran, slowest first (median time).
QVector<LadderChart::Rung> ladderOf(const StrategiesReport& report) {
  QVector<LadderChart::Rung> rungs;
  for (const StrategyRun& r : report.runs)
    rungs.append({qs(r.strategy), r.ok ? r.time.median : std::nan(""), 0, r.ok,
                  r.ok ? QString() : QStringLiteral("failed: ") + qs(r.error)});
  std::stable_sort(rungs.begin(), rungs.end(), [](const auto& a, const auto& b) {
    if (a.ok != b.ok) return !a.ok;  // failed rungs first: they are at least as slow
    return a.seconds > b.seconds;
  });
  return LadderChart::rungsFromTimes(rungs);
}

}  // namespace

QStringList chartExportFormats() {
  return {QStringLiteral("png"), QStringLiteral("svg"), QStringLiteral("pdf"),
          QStringLiteral("csv")};
}

QStringList exportStrategyCharts(const RunHistory& history, const StrategiesReport& lastReport,
                                 const QString& dir, const QStringList& formats, QString* error,
                                 QSize size) {
  QStringList written;
  QDir out(dir);
  if (!out.mkpath(QStringLiteral("."))) {
    if (error) *error = dir + QStringLiteral(": could not create the folder");
    return written;
  }
  using Metric = StrategiesChart::Metric;
  using Layout = StrategiesChart::Layout;
  const std::pair<Metric, Layout> views[] = {{Metric::Time, Layout::BarsLatest},
                                             {Metric::CurMem, Layout::BarsLatest},
                                             {Metric::MaxMem, Layout::BarsLatest},
                                             {Metric::Time, Layout::LinesOverRuns},
                                             {Metric::MaxMem, Layout::LinesOverRuns}};
  for (const auto& [metric, layout] : views) {
    StrategiesChart chart;
    chart.setHistory(&history);
    chart.setLayout(layout);
    chart.setMetric(metric);
    if (!writeChart(chart, out, formats, size, written, error)) return written;
  }
  // The meta device does no arithmetic: its times are bookkeeping, nothing to rank.
  if (lastReport.device != DeviceKind::Meta) {
    LadderChart ranking;
    ranking.setChartName(QStringLiteral("strategies-ranking"));
    ranking.setTitle(QStringLiteral(
        "strategies ranked by median time: slowest at the top, speed-up over the one above"));
    ranking.setRungs(ladderOf(lastReport));
    if (!writeChart(ranking, out, formats, size, written, error)) return written;
  }
  for (const StrategyRun& r : lastReport.runs) {
    if (r.timeline.events.empty()) continue;
    MemoryTimelineModel model;
    model.setTimeline(r.timeline, qs(r.strategy));
    MemoryTimelineChart chart;
    chart.setModel(&model);
    if (!writeChart(chart, out, formats, size, written, error)) return written;
  }
  for (const StrategyRun& r : lastReport.runs) {
    for (const auto& [tensor, name] : {std::pair{&r.backward.dA, "dA"}, {&r.backward.dC, "dC"}}) {
      if (!tensor->defined()) continue;
      TensorGridModel model;
      model.setTensor(*tensor, QStringLiteral("%1, %2").arg(QLatin1String(name), qs(r.strategy)));
      HeatmapChart chart;
      chart.setModel(&model);
      if (!writeChart(chart, out, formats, size, written, error)) return written;
    }
  }
  return written;
}

}  // namespace matmulviz::ui
