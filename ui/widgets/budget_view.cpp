#include "ui/widgets/budget_view.h"

#include "ui/charts/budget_frontier_chart.h"
#include "ui/charts/budget_graph_chart.h"
#include "ui/charts/budget_timeline_chart.h"
#include "ui/models/budget_explorer.h"
#include "ui/models/budget_frontier_model.h"
#include "ui/models/budget_nodes_model.h"
#include "ui/models/budget_timeline_model.h"
#include "ui/widgets/budget_tracer.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSlider>
#include <QSplitter>
#include <QVBoxLayout>

#include <cmath>

namespace matmulviz::ui {

namespace {

constexpr int kSliderSteps = 100;  // 0.01 apart, as the frontier's sweep

}  // namespace

BudgetView::BudgetView(QWidget* parent) : QWidget(parent) {
  explorer_ = new BudgetExplorer(this);
  nodes_ = new BudgetNodesModel(this);
  frontierModel_ = new BudgetFrontierModel(this);
  timelineModel_ = new BudgetTimelineModel(this);
  auto* layout = new QVBoxLayout(this);
  tracer_ = new BudgetTracer(this);
  layout->addWidget(buildControls());
  layout->addWidget(buildTraceRow());
  summary_ = new QLabel;
  summary_->setObjectName("budgetSummary");
  summary_->setWordWrap(true);
  summary_->setMinimumWidth(200);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(summary_);
  graph_ = new BudgetGraphChart;
  graph_->setObjectName("budgetGraph");
  graph_->setMinimumHeight(260);
  frontier_ = new BudgetFrontierChart;
  frontier_->setObjectName("budgetFrontier");
  timeline_ = new BudgetTimelineChart;
  timeline_->setObjectName("budgetTimeline");
  for (ChartView* c : {static_cast<ChartView*>(frontier_), static_cast<ChartView*>(timeline_)})
    c->setMinimumSize(360, 240);
  auto* bottom = new QSplitter(Qt::Horizontal);
  bottom->addWidget(frontier_);
  bottom->addWidget(timeline_);
  bottom->setChildrenCollapsible(false);
  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(graph_);
  split->addWidget(bottom);
  split->setChildrenCollapsible(false);
  split->setSizes({1100, 1000});
  layout->addWidget(split, 1);
  // Models first, charts after: a chart reads its model when told of a change.
  nodes_->setExplorer(explorer_);
  frontierModel_->setExplorer(explorer_);
  timelineModel_->setExplorer(explorer_);
  graph_->setModel(nodes_);
  frontier_->setModel(frontierModel_);
  timeline_->setModel(timelineModel_);
  connect(explorer_, &BudgetExplorer::planChanged, this, &BudgetView::onPlanChanged);
  connect(frontier_, &BudgetFrontierChart::budgetClicked, this, &BudgetView::setBudget);
  selectExample(budgetExamples().front().key);
}

QWidget* BudgetView::buildControls() {
  auto* row = new QWidget;
  auto* h = new QHBoxLayout(row);
  h->setContentsMargins(0, 0, 0, 0);
  example_ = new QComboBox;
  example_->setObjectName("budgetExample");
  for (const BudgetExample& e : budgetExamples()) example_->addItem(e.title, e.key);
  for (const QString& script : BudgetTracer::exampleScripts())  // traced when chosen
    example_->addItem(QFileInfo(script).fileName() + QStringLiteral(": f"),
                      QLatin1String(kTracePrefix) + script);
  example_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  example_->setMinimumContentsLength(30);  // a long title never widens the window
  example_->setToolTip(
      tr("The joint forward and backward graph to plan: x.cos() then five times mm(y, w).cos() "
         "over 512 x 512 float32 (the weights plain tensors that require grad, or module "
         "parameters), or a transformer-like chain (attention and two matmuls per layer, "
         "float16); or a traced function: the repository's examples/budget_*.py, traced when "
         "chosen, and every function traced with \"Trace a function...\""));
  traceButton_ = new QPushButton(tr("Trace a function…"));
  traceButton_->setObjectName("budgetTrace");
  traceButton_->setToolTip(
      tr("Trace a function of a Python script (matmulviz.torch, no arguments, returns a scalar "
         "loss) into its joint forward and backward graph, as torch.compile does, and plan it"));
  solver_ = new QComboBox;
  solver_->setObjectName("budgetSolver");
  solver_->addItem(tr("dp (PyTorch's default)"), int(partitioner::KnapsackSolver::Dp));
  solver_->addItem(tr("greedy"), int(partitioner::KnapsackSolver::Greedy));
  solver_->setToolTip(
      tr("How the knapsack picks which expensive ops to keep: dp finds the best choice, greedy "
         "takes the best FLOPs per byte first"));
  slider_ = new QSlider(Qt::Horizontal);
  slider_->setObjectName("budgetSlider");
  slider_->setRange(0, kSliderSteps);
  slider_->setMinimumWidth(160);
  slider_->setToolTip(
      tr("activation_memory_budget: 0 keeps only the inputs, 1 is PyTorch's "
         "default plan"));
  spin_ = new QDoubleSpinBox;
  spin_->setObjectName("budgetSpin");
  spin_->setRange(0, 1);
  spin_->setDecimals(2);
  spin_->setSingleStep(0.01);
  spin_->setToolTip(slider_->toolTip());
  h->addWidget(new QLabel(tr("Graph")));
  h->addWidget(example_, 2);
  h->addWidget(traceButton_);
  h->addSpacing(12);
  h->addWidget(new QLabel(tr("Memory budget")));
  h->addWidget(slider_, 3);
  h->addWidget(spin_);
  h->addSpacing(12);
  h->addWidget(new QLabel(tr("Solver")));
  h->addWidget(solver_);
  connect(example_, &QComboBox::activated, this, &BudgetView::onGraphChosen);
  connect(traceButton_, &QPushButton::clicked, this, &BudgetView::askAndTrace);
  connect(solver_, &QComboBox::activated, this, [this] {
    explorer_->setSolver(partitioner::KnapsackSolver(solver_->currentData().toInt()));
  });
  connect(slider_, &QSlider::valueChanged, this,
          [this](int v) { setBudget(double(v) / kSliderSteps); });
  connect(spin_, &QDoubleSpinBox::valueChanged, this, &BudgetView::setBudget);
  return row;
}

void BudgetView::setGraph(std::shared_ptr<const partitioner::JointGraph> graph,
                          const QString& title) {
  int index = example_->findText(title);
  if (index < 0) {
    example_->addItem(title, QLatin1String(kGraphPrefix));
    index = example_->count() - 1;
  }
  example_->setCurrentIndex(index);
  traced_[title] = graph;
  explorer_->setGraph(std::move(graph), title);
}

bool BudgetView::selectExample(const QString& key) {
  auto graph = makeBudgetExample(key);
  if (!graph) return false;
  const int index = example_->findData(key);
  example_->setCurrentIndex(index);
  explorer_->setGraph(std::move(graph), example_->itemText(index));
  return true;
}

void BudgetView::setBudget(double budget) {
  explorer_->setBudget(std::round(std::clamp(budget, 0.0, 1.0) * kSliderSteps) / kSliderSteps);
}

double BudgetView::budget() const {
  return explorer_->budget();
}

QString BudgetView::summary() const {
  return summary_->text();
}

void BudgetView::onPlanChanged() {
  const QSignalBlocker a(slider_), b(spin_);
  slider_->setValue(int(std::lround(explorer_->budget() * kSliderSteps)));
  spin_->setValue(explorer_->budget());
  summary_->setText(explorer_->summary());
}

void BudgetView::setPresentationMode(bool on) {
  for (ChartView* c : {static_cast<ChartView*>(graph_), static_cast<ChartView*>(frontier_),
                       static_cast<ChartView*>(timeline_)})
    c->setPresentationMode(on);
}

}  // namespace matmulviz::ui
