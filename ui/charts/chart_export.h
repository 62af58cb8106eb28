#pragma once
// Renders every chart of one strategies run to files, with no display needed (the caller has
// a QApplication, e.g. on the offscreen platform). Used by `matmulviz-cli export` and by the
// GUI's "Export all...".

#include "core/report/strategies_report.h"

#include <QDir>
#include <QSize>
#include <QString>
#include <QStringList>

namespace matmulviz::ui {

class ChartView;
class RunHistory;

/// Writes `chart` into `dir` as <chartName>.<format> for each chart format of `formats` (png,
/// svg, pdf at `size`; csv: its data, skipped when it has none; others ignored), appending the
/// paths to `written`. False with *error (naming the file) on failure.
bool writeChart(ChartView& chart, const QDir& dir, const QStringList& formats, QSize size,
                QStringList& written, QString* error);

/// The formats exportStrategyCharts understands: "png", "svg", "pdf", "csv".
QStringList chartExportFormats();

/// Writes into `dir` (created when missing), for each format in `formats` that is a chart
/// format (png/svg/pdf: the image; csv: the chart's data; others are ignored):
///   strategies-time-bars, strategies-curmem-bars, strategies-maxmem-bars (from `history`,
///   whose last entry should be `lastReport`'s), strategies-time-lines, strategies-maxmem-lines,
///   strategies-ranking (the strategies of lastReport by median time, slowest first; not on
///   the meta device, which measures no time), memory-timeline-<strategy> for each run with a
///   timeline, heatmap-dA-<strategy> / heatmap-dC-<strategy> (slice 0) for each run with
///   gradients. Returns the paths written, in order. On failure sets *error (naming the file)
///   and returns the files written before it.
QStringList exportStrategyCharts(const RunHistory& history, const StrategiesReport& lastReport,
                                 const QString& dir, const QStringList& formats, QString* error,
                                 QSize size = {1600, 900});

}  // namespace matmulviz::ui
