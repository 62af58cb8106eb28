#include "ui/charts/budget_export.h"

#include "ui/charts/budget_frontier_chart.h"
#include "ui/charts/budget_graph_chart.h"
#include "ui/charts/budget_timeline_chart.h"
#include "ui/charts/chart_export.h"
#include "ui/models/budget_explorer.h"
#include "ui/models/budget_frontier_model.h"
#include "ui/models/budget_nodes_model.h"
#include "ui/models/budget_timeline_model.h"

#include "core/partitioner/graph_json.h"

#include <QDir>

#include <memory>

namespace matmulviz::ui {

QStringList exportBudgetCharts(const QString& example, double budget, const QString& dir,
                               const QStringList& formats, QString* error, QSize size) {
  auto graph = makeBudgetExample(example);
  if (!graph) {
    if (error) *error = QStringLiteral("no Budget example called '%1'").arg(example);
    return {};
  }
  QString title;
  for (const BudgetExample& e : budgetExamples())
    if (e.key == example) title = e.title;
  return exportBudgetCharts(*graph, title, budget, dir, formats, error, size);
}

QStringList exportBudgetCharts(const partitioner::JointGraph& graph, const QString& title,
                               double budget, const QString& dir, const QStringList& formats,
                               QString* error, QSize size) {
  QStringList written;
  QDir out(dir);
  if (!out.mkpath(QStringLiteral("."))) {
    if (error) *error = dir + QStringLiteral(": could not create the folder");
    return written;
  }
  BudgetExplorer explorer;
  BudgetNodesModel nodes;
  BudgetFrontierModel frontier;
  BudgetTimelineModel timeline;
  nodes.setExplorer(&explorer);
  frontier.setExplorer(&explorer);
  timeline.setExplorer(&explorer);
  // The explorer keeps the graph: a copy it owns.
  explorer.setGraph(std::make_shared<const partitioner::JointGraph>(graph), title);
  explorer.setBudget(budget);
  BudgetGraphChart graphChart;
  graphChart.setModel(&nodes);
  const QSize graphSize = graphChart.preferredExportSize().expandedTo(size);
  graphChart.fitTo(graphSize);
  if (!writeChart(graphChart, out, formats, graphSize, written, error)) return written;
  BudgetFrontierChart frontierChart;
  frontierChart.setModel(&frontier);
  if (!writeChart(frontierChart, out, formats, size, written, error)) return written;
  BudgetTimelineChart timelineChart;
  timelineChart.setModel(&timeline);
  writeChart(timelineChart, out, formats, size, written, error);
  return written;
}

QStringList exportBudgetGraphFileCharts(const QString& graphFile, double budget, const QString& dir,
                                        const QStringList& formats, QString* error, QSize size) {
  try {
    const partitioner::GraphDocument doc = partitioner::readGraphFile(graphFile.toStdString());
    checkPlannable(doc.graph);
    return exportBudgetCharts(doc.graph, QString::fromStdString(doc.source.title), budget, dir,
                              formats, error, size);
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return {};
  }
}

}  // namespace matmulviz::ui
