#pragma once
// Renders the Budget view's charts for one of its example graphs at one budget, with no display
// needed (the caller has a QApplication): `matmulviz-cli export` writes them beside the
// strategies charts.

#include "core/partitioner/joint_graph.h"

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

/// The same charts for `graph` (a traced function's, from a graph file) titled `title`.
QStringList exportBudgetCharts(const partitioner::JointGraph& graph, const QString& title,
                               double budget, const QString& dir, const QStringList& formats,
                               QString* error, QSize size = {1600, 900});

/// The same charts for the graph file at `graphFile` (kind "budget-graph", its title); a file
/// that cannot be read or planned sets *error (the file's name and the problem).
QStringList exportBudgetGraphFileCharts(const QString& graphFile, double budget, const QString& dir,
                                        const QStringList& formats, QString* error,
                                        QSize size = {1600, 900});

}  // namespace matmulviz::ui
