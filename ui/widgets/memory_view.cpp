#include "ui/widgets/memory_view.h"

#include "core/memory/caching_allocator.h"
#include "ui/charts/memory_timeline_chart.h"
#include "ui/models/memory_timeline_model.h"

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
  row->addWidget(new QLabel(tr("Strategy")));
  row->addWidget(strategy_);
  row->addSpacing(12);
  row->addWidget(summary_, 1);
  layout->addLayout(row);
  model_ = new MemoryTimelineModel(this);
  chart_ = new MemoryTimelineChart;
  chart_->setObjectName("memoryChart");
  chart_->setModel(model_);
  chart_->setMinimumHeight(280);
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
  layout->addWidget(split, 1);
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
    const int peak = model_->peakEvent();
    const auto& ev = r.timeline.events;
    QString op;
    if (peak >= 0 && peak < int(ev.size()) && ev[size_t(peak)].opId >= 0 &&
        ev[size_t(peak)].opId < int(r.timeline.opNames.size()))
      op = QString::fromStdString(r.timeline.opNames[size_t(ev[size_t(peak)].opId)]);
    summary_->setText(tr("%1: %2 events; peak allocated %3 at event %4 (%5); curMem after the "
                         "statement %6. Drag to pan, wheel to zoom, hover for details.")
                          .arg(strategy)
                          .arg(ev.size())
                          .arg(QString::fromStdString(formatBytes(r.peak.allocatedBytes)))
                          .arg(peak)
                          .arg(op)
                          .arg(QString::fromStdString(formatBytes(r.current.allocatedBytes))));
    return true;
  }
  return false;
}

void MemoryView::setPresentationMode(bool on) {
  chart_->setPresentationMode(on);
}

}  // namespace matmulviz::ui
