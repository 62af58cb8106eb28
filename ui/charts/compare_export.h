#pragma once
// Renders the charts of a comparison to files, with no display needed (the caller has a
// QApplication, e.g. on the offscreen platform): `matmulviz-cli compare --out DIR`.

#include "core/report/compare_reports.h"

#include <QSize>
#include <QString>
#include <QStringList>

namespace matmulviz::ui {

/// Writes into `dir` (which exists), for each chart format of `formats` (png, svg, pdf; csv: the
/// chart's data): compare-strategies-maxmem, compare-strategies-curmem, compare-strategies-time
/// (when both sides are strategies reports; the time chart not when neither side measured
/// time), and for each pair of timelines compare-memory-<name> (both timelines on one axis) and
/// compare-difference-<name> (B - A by label at the peak). `nameA`/`nameB` label the sides.
/// Returns the paths written, in order; on failure sets *error (naming the file) and returns
/// those written before it.
QStringList exportCompareCharts(const ReportComparison& c, const QString& dir,
                                const QStringList& formats, QString* error,
                                QSize size = {1600, 900});

}  // namespace matmulviz::ui
