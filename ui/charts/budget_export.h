#pragma once
// Renders the Budget view's charts for one of its example graphs at one budget, with no display
// needed (the caller has a QApplication): `matmulviz-cli export` writes them beside the
// strategies charts.

#include <QSize>
#include <QString>
#include <QStringList>

namespace matmulviz::ui {

/// Writes into `dir` (created when missing), for each chart format in `formats` (png, svg, pdf:
/// the image; csv: its data; others ignored): budget-graph (at the size that fits the whole
/// graph, at least `size`), budget-frontier and budget-timeline, for budgetExamples() `example`
/// planned at `budget` (0 to 1) with the dp knapsack. Returns the paths written; on failure
/// sets *error (naming the file or the unknown example) and returns those written before it.
QStringList exportBudgetCharts(const QString& example, double budget, const QString& dir,
                               const QStringList& formats, QString* error,
                               QSize size = {1600, 900});

}  // namespace matmulviz::ui
