#include "ui/widgets/memory_view.h"
#include "core/util/format_units.h"

#include "core/memory/caching_allocator.h"
#include "ui/charts/memory_timeline_chart.h"
#include "ui/models/memory_timeline_model.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

namespace matmulviz::ui {

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
  row->addWidget(new QLabel(tr("Strategy")));
  row->addWidget(strategy_);
  row->addSpacing(12);
  row->addWidget(summary_, 1);
  scale_ = new QCheckBox(tr("scale to allocated"));
  scale_->setObjectName("memoryScaleToAllocated");
  scale_->setToolTip(
      tr("Fit the value axis to allocated memory (reserved may go above it); on "
         "by default when reserved is far above the allocated peak"));
  row->addWidget(scale_);
  layout->addLayout(row);
  model_ = new MemoryTimelineModel(this);
  chart_ = new MemoryTimelineChart;
  chart_->setObjectName("memoryChart");
  chart_->setModel(model_);
  // Title, legend (two rows), axis and its title: below this the axis title is cut.
  chart_->setMinimumHeight(360);
  table_ = new QTableView;
  table_->setObjectName("memoryEvents");
  table_->setModel(model_);
  table_->setAlternatingRowColors(true);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->horizontalHeader()->setStretchLastSection(true);
  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(chart_);
  split->addWidget(table_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  split->setChildrenCollapsible(false);
  split->setSizes({3000, 1000});  // 3:1 of whatever height the view gets, the chart first
  table_->setMinimumHeight(100);
  layout->addWidget(split, 1);
  connect(scale_, &QCheckBox::toggled, chart_, &MemoryTimelineChart::setScaleToAllocated);
  connect(chart_, &MemoryTimelineChart::scaleToAllocatedChanged, scale_, &QCheckBox::setChecked);
  connect(strategy_, &QComboBox::activated, this,
          [this] { showStrategy(strategy_->currentText()); });
}

void MemoryView::setReport(std::shared_ptr<const StrategiesReport> report) {
  report_ = std::move(report);
  strategy_->clear();
  if (!report_) return;
  QString largest;
  int64_t largestPeak = -1;
  for (const StrategyRun& r : report_->runs) {
    if (r.timeline.events.empty()) continue;
    const QString name = QString::fromStdString(r.strategy);
    strategy_->addItem(name);
    if (r.peak.allocatedBytes > largestPeak) largestPeak = r.peak.allocatedBytes, largest = name;
  }
  if (!largest.isEmpty()) {
    strategy_->setCurrentText(largest);
    showStrategy(largest);
  } else {
    model_->clear();
    summary_->setText(tr("No timeline in this report."));
  }
}

bool MemoryView::showStrategy(const QString& strategy) {
  if (!report_) return false;
  for (const StrategyRun& r : report_->runs) {
    if (QString::fromStdString(r.strategy) != strategy || r.timeline.events.empty()) continue;
    model_->setTimeline(r.timeline, strategy);
    // One peak, the model's, as the chart marks it; maxMem (the statement's peak) beside it
    // only when backward went higher.
    QString text = tr("%1: %2 events; peak allocated %3")
                       .arg(strategy)
                       .arg(model_->eventCount())
                       .arg(model_->peakText());
    if (model_->statementPeakEvent() != model_->peakEvent())
      text += tr("; maxMem of the statement %1 at event %2")
                  .arg(QString::fromStdString(formatSize(model_->statementPeakBytes())))
                  .arg(model_->statementPeakEvent());
    summary_->setText(text +
                      tr("; curMem after the statement %1. Drag to pan, wheel to zoom, "
                         "hover for details.")
                          .arg(QString::fromStdString(formatSize(r.current.allocatedBytes))));
    return true;
  }
  return false;
}

void MemoryView::setPresentationMode(bool on) {
  chart_->setPresentationMode(on);
}

}  // namespace matmulviz::ui
