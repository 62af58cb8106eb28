#include "ui/widgets/memory_view.h"

#include "core/io/timeline_store.h"
#include "core/memory/caching_allocator.h"
#include "core/util/format_units.h"
#include "ui/charts/allocation_bands_chart.h"
#include "ui/charts/big_timeline_chart.h"
#include "ui/charts/memory_timeline_chart.h"
#include "ui/models/memory_timeline_model.h"
#include "ui/models/stored_events_model.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QScrollArea>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableView>
#include <QVBoxLayout>

namespace matmulviz::ui {

namespace {

QString sizeText(int64_t bytes) {
  return QString::fromStdString(formatSize(bytes));
}

/// Puts the segments panel beside `table` (in the table's splitter), as PyTorch's viewer puts
/// its events beside its segments.
void placeBeside(QWidget* table, QWidget* panel) {
  auto* split = qobject_cast<QSplitter*>(table->parentWidget());
  if (!split || panel->parentWidget() == split) return;
  split->addWidget(panel);
  split->setSizes({2000, 3000});
  if (auto* outer = qobject_cast<QSplitter*>(split->parentWidget()))
    outer->setSizes({3000, 2200});  // the chart, and room for the panel's bars
}

}  // namespace

MemoryView::MemoryView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  auto* row = new QHBoxLayout;
  strategy_ = new QComboBox;
  strategy_->setObjectName("memoryStrategy");
  strategy_->setMinimumContentsLength(12);
  summary_ = new QLabel(tr("Run the strategies (Ctrl+R) to see each one's memory timeline."));
  summary_->setObjectName("memorySummary");
  summary_->setWordWrap(true);  // a long header wraps rather than widening the window
  summary_->setMinimumWidth(200);
  chooserLabel_ = new QLabel(tr("Strategy"));
  row->addWidget(chooserLabel_);
  row->addWidget(strategy_);
  row->addSpacing(12);
  row->addWidget(summary_, 1);
  scale_ = new QCheckBox(tr("scale to allocated"));
  scale_->setObjectName("memoryScaleToAllocated");
  scale_->setToolTip(
      tr("Fit the value axis to allocated memory (reserved may go above it); on "
         "by default when reserved is far above the allocated peak"));
  stackByLabel_ = new QLabel(tr("stack by"));
  stackBy_ = new QComboBox;
  stackBy_->setObjectName("memoryStackBy");
  stackBy_->addItems({tr("category"), tr("allocation")});
  row->addWidget(stackByLabel_);
  row->addWidget(stackBy_);
  row->addWidget(scale_);
  layout->addLayout(row);
  segments_ = new SegmentsPanel;
  segments_->setMinimumWidth(320);
  table_ = new QTableView;
  model_ = new MemoryTimelineModel(this);
  chart_ = new MemoryTimelineChart;
  chart_->setObjectName("memoryChart");
  chart_->setModel(model_);
  // Title, legend (two rows), axis and its title: below this the axis title is cut.
  chart_->setMinimumHeight(360);
  table_->setObjectName("memoryEvents");
  table_->setModel(model_);
  table_->setAlternatingRowColors(true);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  // The event column numbers the rows from 0, as every view counts events; a 1-based row
  // header beside it read as a second count.
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(true);
  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(makeChartStack());
  auto* bottom = new QSplitter(Qt::Horizontal);  // the table, and a snapshot's segments panel
  bottom->addWidget(table_);
  bottom->setChildrenCollapsible(false);
  split->addWidget(bottom);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  split->setChildrenCollapsible(false);
  split->setSizes({3000, 1000});  // 3:1 of whatever height the view gets, the chart first
  table_->setMinimumHeight(100);
  reportSummary_ = new QLabel;
  reportSummary_->setObjectName("memoryReportSummary");
  reportSummary_->setWordWrap(true);
  reportSummary_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  reportSummary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  reportSummary_->setMargin(8);
  auto* summaryScroll = new QScrollArea;
  summaryScroll->setWidget(reportSummary_);
  summaryScroll->setWidgetResizable(true);
  pages_ = new QStackedWidget;
  pages_->addWidget(split);
  pages_->addWidget(summaryScroll);
  pages_->addWidget(makeStorePage());  // page 2
  layout->addWidget(pages_, 1);
  placeBeside(table_, segments_);
  segments_->linkTable(table_);
  segments_->linkChart(chart_);
  connect(scale_, &QCheckBox::toggled, chart_, &MemoryTimelineChart::setScaleToAllocated);
  connect(chart_, &MemoryTimelineChart::scaleToAllocatedChanged, scale_, &QCheckBox::setChecked);
  connect(strategy_, &QComboBox::activated, this,
          [this] { showStrategy(strategy_->currentText()); });
}

// The level-of-detail chart above the table of every event, read from the store as scrolled;
// a click on a row centres the chart on that event.
QWidget* MemoryView::makeStorePage() {
  bigChart_ = new BigTimelineChart;
  bigChart_->setObjectName("memoryBigChart");
  bigChart_->setMinimumHeight(360);
  storedEvents_ = new StoredEventsModel(this);
  auto* table = new QTableView;
  table->setObjectName("memoryStoredEvents");
  table->setModel(storedEvents_);
  table->setAlternatingRowColors(true);
  table->setSelectionBehavior(QAbstractItemView::SelectRows);
  table->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);  // no per-row sizing
  table->verticalHeader()->hide();  // the event column numbers the rows
  table->setWordWrap(false);
  table->horizontalHeader()->setStretchLastSection(true);
  table->setMinimumHeight(100);
  connect(table, &QTableView::clicked, this, [this](const QModelIndex& index) {
    bigChart_->setVisibleRange(index.row() - 500.0, index.row() + 500.0);
  });
  storedEventsTable_ = table;
  segments_->linkTable(table);
  segments_->linkChart(bigChart_);
  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(bigChart_);
  auto* bottom = new QSplitter(Qt::Horizontal);
  bottom->addWidget(table);
  bottom->setChildrenCollapsible(false);
  split->addWidget(bottom);
  split->setChildrenCollapsible(false);
  split->setSizes({3000, 1000});
  return split;
}

void MemoryView::setReport(std::shared_ptr<const StrategiesReport> report) {
  allocations_.reset();
  store_.reset();
  segments_->setHistories({});
  owner_ = report;
  report_ = std::move(report);
  sources_.clear();
  if (report_)
    for (const StrategyRun& r : report_->runs)
      if (!r.timeline.events.empty())
        sources_.append({QString::fromStdString(r.strategy), &r.timeline, r.peak.allocatedBytes,
                         r.current.allocatedBytes});
  offer(tr("Strategy"), tr("No timeline in this report."));
  if (sources_.isEmpty() && report_ && !report_->runs.empty()) showReportSummary();
}

void MemoryView::setTimelines(const QString& fileName, const QString& chooserLabel,
                              std::shared_ptr<const std::vector<NamedTimeline>> timelines,
                              const QString& note) {
  allocations_.reset();
  store_.reset();
  segments_->setHistories({});
  owner_ = timelines;
  report_.reset();
  note_ = note;
  sources_.clear();
  if (timelines)
    for (const NamedTimeline& d : *timelines) {
      qint64 peak = 0;
      for (const MemoryEvent& e : d.timeline.events)
        peak = std::max<qint64>(peak, e.after.allocatedBytes);
      sources_.append({d.name, &d.timeline, peak, -1});
    }
  offer(chooserLabel, tr("%1 holds no memory events.").arg(fileName));
  if (!sources_.isEmpty()) summary_->setText(tr("%1, %2").arg(fileName, summary_->text()));
}

void MemoryView::offer(const QString& chooserLabel, const QString& noTimeline) {
  updateStackBy();
  chooserLabel_->setText(chooserLabel);
  strategy_->clear();
  pages_->setCurrentIndex(0);
  reportSummary_->clear();
  const Source* largest = nullptr;
  for (const Source& s : sources_) {
    strategy_->addItem(s.name);
    if (!largest || s.peakBytes > largest->peakBytes) largest = &s;
  }
  strategy_->setEnabled(largest != nullptr);
  scale_->setEnabled(largest != nullptr);
  if (largest) {
    strategy_->setCurrentText(largest->name);
    showStrategy(largest->name);
  } else {
    model_->clear();
    summary_->setText(noTimeline);
  }
}

void MemoryView::showReportSummary() {
  QString html =
      tr("<p>This report has no memory timeline: it holds each strategy's counters "
         "and what stays alive. Write the timeline into the report with <code>"
         "matmulviz-cli strategies --json FILE --timeline TRACE</code>.</p>");
  html +=
      tr("<table cellpadding='4'><tr><th align='left'>strategy</th><th align='right'>maxMem "
         "(peak allocated)</th><th align='right'>curMem (after the statement)</th>"
         "<th align='left'>kept alive, and why</th></tr>");
  for (const StrategyRun& r : report_->runs) {
    QStringList kept;
    for (const KeptAlive& k : r.keptAlive)
      kept << tr("%1 %2%3").arg(
          QString::fromStdString(k.label).toHtmlEscaped(), sizeText(k.bytes),
          k.why.empty() ? QString() : ": " + QString::fromStdString(k.why).toHtmlEscaped());
    const QString name = QString::fromStdString(r.strategy).toHtmlEscaped();
    html += r.ok ? tr("<tr><td>%1</td><td align='right'>%2</td><td align='right'>%3</td>"
                      "<td>%4</td></tr>")
                       .arg(name, sizeText(r.peak.allocatedBytes),
                            sizeText(r.current.allocatedBytes), kept.join("<br>"))
                 : tr("<tr><td>%1</td><td colspan='3'>failed: %2</td></tr>")
                       .arg(name, QString::fromStdString(r.error).toHtmlEscaped());
  }
  reportSummary_->setText(html + "</table>");
  pages_->setCurrentIndex(1);
  summary_->setText(tr("No timeline in this report: its memory per strategy is below."));
}

void MemoryView::setStore(const QString& fileName,
                          std::shared_ptr<const store::TimelineStore> store, const QString& note) {
  allocations_.reset();
  owner_.reset();
  report_.reset();
  sources_.clear();
  model_->clear();
  segments_->setHistories({});
  note_ = note;
  store_ = std::move(store);
  updateStackBy();
  chooserLabel_->setText(tr("Device"));
  strategy_->clear();
  scale_->setEnabled(false);
  const store::DeviceInfo* largest = nullptr;
  if (store_)
    for (const store::DeviceInfo& d : store_->devices()) {
      strategy_->addItem(QString::fromStdString(d.name));
      if (!largest || d.peakAllocated > largest->peakAllocated) largest = &d;
    }
  strategy_->setEnabled(largest != nullptr);
  if (!largest) {
    bigChart_->setStore(nullptr, 0);
    storedEvents_->setStore(nullptr, 0);
    pages_->setCurrentIndex(2);
    summary_->setText(tr("%1 holds no memory events.").arg(fileName));
    return;
  }
  strategy_->setCurrentText(QString::fromStdString(largest->name));
  showStoredDevice(QString::fromStdString(largest->name));
  summary_->setText(tr("%1, %2").arg(fileName, summary_->text()));
}

bool MemoryView::showStoredDevice(const QString& name) {
  for (const store::DeviceInfo& d : store_->devices()) {
    if (QString::fromStdString(d.name) != name) continue;
    bigChart_->setStore(store_, d.id);
    storedEvents_->setStore(store_, d.id);
    pages_->setCurrentIndex(2);
    placeBeside(storedEventsTable_, segments_);
    segments_->showDevice(name, d.peakIndex);
    summary_->setText(tr("%1: %2 events (allocations, frees and segment changes); peak "
                         "allocated %3 at event %4. %5 Drawn at level of "
                         "detail (each pixel the minimum to maximum of its events). Drag to "
                         "pan, wheel to zoom, hover for the event.")
                          .arg(name, QLocale().toString(qlonglong(d.events)),
                               QString::fromStdString(formatSize(d.peakAllocated)),
                               QLocale().toString(qlonglong(d.peakIndex)), note_));
    return true;
  }
  return false;
}

bool MemoryView::showStrategy(const QString& name) {
  if (store_) return showStoredDevice(name);
  for (const Source& s : sources_) {
    if (s.name != name) continue;
    model_->setTimeline(*s.timeline, name);
    pages_->setCurrentIndex(0);
    placeBeside(table_, segments_);
    segments_->showDevice(name, model_->peakEvent());
    showStacking(name);
    // One peak, the model's, as the chart marks it; maxMem (the statement's peak) beside it
    // only when backward went higher.
    QString text = tr("%1: %2 events (allocations, frees and segment changes); peak allocated %3")
                       .arg(name, QLocale().toString(model_->eventCount()))
                       .arg(model_->peakText());
    if (s.currentBytes < 0) {  // an opened timeline: a snapshot's device, a Python run
      summary_->setText(text + ". " + note_ +
                        tr(" Drag to pan, wheel to zoom, hover for details."));
      return true;
    }
    if (model_->statementPeakEvent() != model_->peakEvent())
      text += tr("; maxMem of the statement %1 at event %2")
                  .arg(sizeText(model_->statementPeakBytes()))
                  .arg(model_->statementPeakEvent());
    summary_->setText(text + tr("; curMem after the statement %1. Drag to pan, wheel to zoom, "
                                "hover for details.")
                                 .arg(sizeText(s.currentBytes)));
    return true;
  }
  return false;
}

bool MemoryView::hasTimeline() const {
  if (pages_->currentIndex() == 2) return bigChart_->columnCount() > 0;
  return pages_->currentIndex() == 0 && model_->eventCount() > 0;
}

QString MemoryView::summaryText() const {
  return pages_->currentIndex() == 1 ? reportSummary_->text() : QString();
}

void MemoryView::setPresentationMode(bool on) {
  chart_->setPresentationMode(on);
  bigChart_->setPresentationMode(on);
  bandsChart_->setPresentationMode(on);
  segments_->setPresentationMode(on);
}

void MemoryView::setAllocatorHistories(AllocatorHistories histories, const QString& unavailable) {
  segments_->setHistories(std::move(histories), unavailable);
  const QString name = strategy_->currentText();
  int64_t peak = model_->peakEvent();
  if (store_)
    for (const store::DeviceInfo& d : store_->devices())
      if (QString::fromStdString(d.name) == name) peak = d.peakIndex;
  segments_->showDevice(name, peak);
}

}  // namespace matmulviz::ui
