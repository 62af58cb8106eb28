#include "ui/widgets/compare_window.h"

#include "core/report/compare_text.h"
#include "core/util/format_units.h"
#include "ui/charts/compare_diff_chart.h"
#include "ui/charts/compare_strategies_chart.h"
#include "ui/charts/compare_timeline_chart.h"
#include "ui/models/compare_events_model.h"
#include "ui/models/compare_memory_model.h"
#include "ui/models/compare_strategies_model.h"
#include "ui/models/memory_timeline_model.h"
#include "ui/models/qstring_of.h"
#include "ui/widgets/diff_color_proxy.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

namespace matmulviz::ui {

namespace {

QTableView* makeTable(QAbstractItemModel* source, int signRole, const char* name, QWidget* owner) {
  auto* view = new QTableView;
  view->setObjectName(QLatin1String(name));
  view->setModel(new DiffColorProxy(signRole, owner));
  static_cast<DiffColorProxy*>(view->model())->setSourceModel(source);
  view->setAlternatingRowColors(true);
  view->setSelectionBehavior(QAbstractItemView::SelectRows);
  view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  view->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);  // the names
  view->verticalHeader()->hide();
  return view;
}

/// A message in place of a page's charts, wrapped, in the window's text colour.
QLabel* makeMessage(const char* name) {
  auto* label = new QLabel;
  label->setObjectName(QLatin1String(name));
  label->setWordWrap(true);
  label->setAlignment(Qt::AlignCenter);
  label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  label->setMargin(24);
  return label;
}

}  // namespace

CompareWindow::CompareWindow(QWidget* parent) : QWidget(parent, Qt::Window) {
  setObjectName("compareWindow");
  setWindowTitle(tr("Compare — matmulviz"));
  modelA_ = std::make_unique<MemoryTimelineModel>();
  modelB_ = std::make_unique<MemoryTimelineModel>();
  auto* layout = new QVBoxLayout(this);
  header_ = new QLabel;
  header_->setObjectName("compareHeader");
  header_->setWordWrap(true);
  header_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(header_);
  tabs_ = new QTabWidget;
  tabs_->addTab(buildMemoryPage(), tr("&Memory"));
  tabs_->addTab(buildStrategiesPage(), tr("&Strategies"));
  tabs_->addTab(buildEventsPage(), tr("&Events"));
  layout->addWidget(tabs_, 1);
  resize(1400, 900);
}

CompareWindow::~CompareWindow() {
  // The charts follow the timeline models: let go of them before the models go.
  timelineChart_->setTimelines(nullptr, {}, nullptr, {}, {});
}

QWidget* CompareWindow::buildMemoryPage() {
  auto* page = new QWidget;
  auto* layout = new QVBoxLayout(page);
  auto* bar = new QHBoxLayout;
  timeline_ = new QComboBox;
  timeline_->setObjectName("compareTimeline");
  grouping_ = new QComboBox;
  grouping_->setObjectName("compareGrouping");
  grouping_->addItems({tr("alive at the peak, by label"), tr("alive at the peak, by category"),
                       tr("allocated over the run, by label")});
  bar->addWidget(new QLabel(tr("Timeline")));
  bar->addWidget(timeline_);
  bar->addSpacing(12);
  bar->addWidget(new QLabel(tr("Rows")));
  bar->addWidget(grouping_);
  bar->addStretch(1);
  bar->addWidget(new QLabel(tr("B − A: growth in red, shrink in green")));
  layout->addLayout(bar);
  memoryModel_ = new CompareMemoryModel(this);
  timelineChart_ = new CompareTimelineChart;
  timelineChart_->setMinimumSize(420, 280);
  diffChart_ = new CompareDiffChart;
  diffChart_->setMinimumSize(320, 280);
  auto* charts = new QSplitter(Qt::Horizontal);
  charts->addWidget(timelineChart_);
  charts->addWidget(diffChart_);
  charts->setStretchFactor(0, 3);
  charts->setStretchFactor(1, 2);
  memoryTable_ = makeTable(memoryModel_, CompareMemoryModel::SignRole, "compareMemoryTable", this);
  memoryTable_->setColumnHidden(CompareMemoryModel::Blocks, true);  // by label at the peak
  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(charts);
  split->addWidget(memoryTable_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  memoryPages_ = new QStackedWidget;
  memoryPages_->addWidget(split);
  noTimeline_ = makeMessage("compareNoTimeline");
  memoryPages_->addWidget(noTimeline_);
  layout->addWidget(memoryPages_, 1);
  connect(timeline_, &QComboBox::currentIndexChanged, this, &CompareWindow::showPair);
  connect(grouping_, &QComboBox::currentIndexChanged, this, [this](int i) {
    const auto g = static_cast<CompareMemoryModel::Grouping>(i);
    memoryModel_->setGrouping(g);
    memoryTable_->setColumnHidden(CompareMemoryModel::Blocks,
                                  g != CompareMemoryModel::Grouping::AllocationsByLabel);
    updateDiffChart();
  });
  return page;
}

QWidget* CompareWindow::buildStrategiesPage() {
  auto* page = new QWidget;
  auto* layout = new QVBoxLayout(page);
  auto* bar = new QHBoxLayout;
  metric_ = new QComboBox;
  metric_->setObjectName("compareMetric");
  metric_->addItems(
      {tr("maxMem (peak allocated)"), tr("curMem (after the statement)"), tr("median time")});
  bar->addWidget(new QLabel(tr("Chart")));
  bar->addWidget(metric_);
  bar->addStretch(1);
  layout->addLayout(bar);
  strategiesModel_ = new CompareStrategiesModel(this);
  strategiesChart_ = new CompareStrategiesChart;
  strategiesChart_->setMinimumSize(420, 260);
  strategiesTable_ =
      makeTable(strategiesModel_, CompareStrategiesModel::SignRole, "compareStrategiesTable", this);
  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(strategiesChart_);
  split->addWidget(strategiesTable_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  strategyPages_ = new QStackedWidget;
  strategyPages_->addWidget(split);
  noStrategies_ = makeMessage("compareNoStrategies");
  strategyPages_->addWidget(noStrategies_);
  layout->addWidget(strategyPages_, 1);
  connect(metric_, &QComboBox::currentIndexChanged, this, [this](int i) {
    strategiesChart_->setMetric(static_cast<CompareStrategiesChart::Metric>(i));
  });
  return page;
}

QWidget* CompareWindow::buildEventsPage() {
  auto* page = new QWidget;
  auto* layout = new QVBoxLayout(page);
  auto* bar = new QHBoxLayout;
  sequence_ = new QComboBox;
  sequence_->setObjectName("compareSequence");
  bar->addWidget(new QLabel(tr("Sequences")));
  bar->addWidget(sequence_, 1);
  bar->addStretch(1);
  bar->addWidget(
      new QLabel(tr("allocs and frees aligned by kind, request size and order; "
                    "rows that differ in red")));
  layout->addLayout(bar);
  eventsSummary_ = new QLabel;
  eventsSummary_->setObjectName("compareEventsSummary");
  eventsSummary_->setWordWrap(true);
  eventsSummary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  eventsModel_ = new CompareEventsModel(this);
  eventsTable_ = makeTable(eventsModel_, CompareEventsModel::SignRole, "compareEventsTable", this);
  eventsTable_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  eventsTable_->horizontalHeader()->setSectionResizeMode(CompareEventsModel::WhereB,
                                                         QHeaderView::Stretch);
  auto* content = new QWidget;
  auto* contentLayout = new QVBoxLayout(content);
  contentLayout->setContentsMargins(0, 0, 0, 0);
  contentLayout->addWidget(eventsSummary_);
  contentLayout->addWidget(eventsTable_, 1);
  eventPages_ = new QStackedWidget;
  eventPages_->addWidget(content);
  noEvents_ = makeMessage("compareNoEvents");
  eventPages_->addWidget(noEvents_);
  layout->addWidget(eventPages_, 1);
  connect(sequence_, &QComboBox::currentIndexChanged, this, &CompareWindow::showSequence);
  return page;
}

void CompareWindow::showSequence(int index) {
  if (!files_ || index < 0 || size_t(index) >= files_->comparison.sequences.size()) return;
  eventsModel_->setSequence(files_->comparison.sequences[size_t(index)]);
  eventsSummary_->setText(eventsSummary());
  const int row = std::max(0, eventsModel_->firstDivergence());
  if (eventsModel_->rowCount() > 0) {
    eventsTable_->selectRow(row);
    eventsTable_->scrollTo(eventsTable_->model()->index(row, 0),
                           QAbstractItemView::PositionAtCenter);
  }
}

QString CompareWindow::eventsSummary() const {
  const int index = sequence_->currentIndex();
  if (!files_ || index < 0 || size_t(index) >= files_->comparison.sequences.size()) return {};
  const ComparedSequence& c = files_->comparison.sequences[size_t(index)];
  const SequenceAlignment& al = c.alignment;
  auto side = [](const char* name, const AllocationSequence& s) {
    QString t = tr("<b>%1</b>: %2 allocs and frees, starting %3; at the start: requests %4")
                    .arg(QLatin1String(name))
                    .arg(s.events.size())
                    .arg(qs(s.start).toHtmlEscaped(), qs(formatSize(s.startRequested)));
    if (s.hasReserved()) t += tr(", reserved %1").arg(qs(formatSize(s.startReserved)));
    return t;
  };
  auto drift = [&](const QString& total, int64_t atStart, int64_t row) {
    QString t = tr("%1 B − A at the start %2").arg(total, qs(formatSizeDifference(atStart)));
    return row < 0 ? t + tr(", the same at every matched event")
                   : t + tr(", first otherwise at row %1").arg(row);
  };
  const QString divergence = qs(describeDivergence(al, *c.a, *c.b)).toHtmlEscaped();
  QString text = al.diverges() ? QStringLiteral("<b style='color:%1'>%2</b>")
                                     .arg(DiffColorProxy::growthColor().name(), divergence)
                               : QStringLiteral("<b>%1</b>").arg(divergence);
  text += "<br>" + side("A", *c.a) + "<br>" + side("B", *c.b) + "<br>" +
          drift(tr("live requests:"), c.b->startRequested - c.a->startRequested,
                al.firstRequestedDrift);
  if (al.bothReserved)
    text += "; " +
            drift(tr("reserved:"), c.b->startReserved - c.a->startReserved, al.firstReservedDrift);
  return text;
}

void CompareWindow::setComparison(std::shared_ptr<const ComparedFiles> files) {
  files_ = std::move(files);
  const ReportComparison& c = files_->comparison;
  setWindowTitle(tr("Compare %1 with %2 — matmulviz").arg(files_->nameA, files_->nameB));
  header_->setText(headerText());
  if (c.hasStrategies) {
    strategiesModel_->setComparison(c.strategies);
    strategiesChart_->setComparison(c.strategies, files_->nameA, files_->nameB);
    strategyPages_->setCurrentIndex(0);
  } else {
    strategiesModel_->clear();
    strategiesChart_->setComparison({}, {}, {});
    noStrategies_->setText(tr("%1 and %2 are not both strategies reports: their strategies "
                              "cannot be compared (matmulviz-cli strategies --json r.json "
                              "writes one).")
                               .arg(files_->nameA, files_->nameB));
    strategyPages_->setCurrentIndex(1);
  }
  {
    const QSignalBlocker block(sequence_);
    sequence_->clear();
    for (const ComparedSequence& q : c.sequences) sequence_->addItem(qs(q.name));
  }
  sequence_->setEnabled(sequence_->count() > 1);
  if (c.sequences.empty()) {
    eventsModel_->clear();
    eventsSummary_->clear();
    noEvents_->setText(
        tr("No allocation sequences to align: the Events page compares a Python "
           "run's report (python3 -m matmulviz SCRIPT --report run.json) with a "
           "PyTorch memory snapshot, or two of either."));
    eventPages_->setCurrentIndex(1);
  } else {
    eventPages_->setCurrentIndex(0);
    showSequence(0);
  }
  {
    const QSignalBlocker block(timeline_);
    timeline_->clear();
    for (const ComparedTimeline& t : c.timelines) timeline_->addItem(qs(t.name));
  }
  timeline_->setEnabled(timeline_->count() > 1);
  if (c.timelines.empty()) {
    QStringList notes;
    for (const std::string& n : c.notes) notes << qs(n);
    noTimeline_->setText(tr("No memory timelines to compare.\n\n%1").arg(notes.join("\n")));
    memoryPages_->setCurrentIndex(1);
    memoryModel_->clear();
    timelineChart_->setTimelines(nullptr, {}, nullptr, {}, {});
    diffChart_->setRows({}, {}, {});
    showPage(c.hasStrategies        ? Page::Strategies
             : !c.sequences.empty() ? Page::Events
                                    : Page::Memory);
    return;
  }
  memoryPages_->setCurrentIndex(0);
  showPair(0);
  showPage(Page::Memory);
}

QString CompareWindow::headerText() const {
  if (!files_) return {};
  const ReportComparison& c = files_->comparison;
  QString text = tr("<b>A</b>: %1 &nbsp; <b>B</b>: %2 &nbsp; (differences are B − A)")
                     .arg(files_->nameA.toHtmlEscaped(), files_->nameB.toHtmlEscaped());
  QStringList setup;
  for (const std::string& s : c.strategies.setupDifferences) setup << qs(s).toHtmlEscaped();
  if (c.hasStrategies)
    text += "<br>" + (setup.isEmpty() ? tr("run alike: same workload, device and requires_grad")
                                      : setup.join("; "));
  for (const std::string& n : c.notes)
    text += QStringLiteral("<br><span style='color:#a05000'>%1</span>").arg(qs(n).toHtmlEscaped());
  return text;
}

bool CompareWindow::showTimeline(const QString& name) {
  const int i = timeline_->findText(name);
  if (i < 0) return false;
  timeline_->setCurrentIndex(i);
  showPair(i);
  return true;
}

void CompareWindow::showPair(int index) {
  if (!files_ || index < 0 || size_t(index) >= files_->comparison.timelines.size()) return;
  const ComparedTimeline& t = files_->comparison.timelines[size_t(index)];
  modelA_->setTimeline(*t.a, qs(t.nameA));
  modelB_->setTimeline(*t.b, qs(t.nameB));
  timelineChart_->setTimelines(modelA_.get(), files_->nameA, modelB_.get(), files_->nameB,
                               qs(t.name));
  memoryModel_->setComparison(t.difference);
  updateDiffChart();
}

void CompareWindow::updateDiffChart() {
  const int index = timeline_->currentIndex();
  if (!files_ || index < 0 || size_t(index) >= files_->comparison.timelines.size()) return;
  const ComparedTimeline& t = files_->comparison.timelines[size_t(index)];
  // The bars show bytes at the peak; over the run they would mix in the allocations' totals.
  if (memoryModel_->grouping() == CompareMemoryModel::Grouping::PeakByCategory)
    diffChart_->setRows(t.difference.peakByCategory, tr("category at the peak"), qs(t.name));
  else
    diffChart_->setRows(t.difference.peakByLabel, tr("label at the peak"), qs(t.name));
}

void CompareWindow::showPage(Page p) {
  tabs_->setCurrentIndex(p == Page::Memory ? 0 : p == Page::Strategies ? 1 : 2);
}

void CompareWindow::setPresentationMode(bool on) {
  timelineChart_->setPresentationMode(on);
  diffChart_->setPresentationMode(on);
  strategiesChart_->setPresentationMode(on);
}

}  // namespace matmulviz::ui
