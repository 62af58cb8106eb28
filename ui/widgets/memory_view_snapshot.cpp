// The Memory view's parts for an opened PyTorch memory snapshot: "stack by" (category, or
// allocation as PyTorch's memory_viz stacks it) and the event table's hover with the block's
// stack. The rest of the view is memory_view.cpp.
#include "core/io/snapshot_categories.h"
#include "ui/charts/allocation_bands_chart.h"
#include "ui/charts/event_picker.h"
#include "ui/charts/memory_timeline_chart.h"
#include "ui/models/snapshot_allocations.h"
#include "ui/widgets/memory_view.h"
#include "ui/widgets/segments_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHelpEvent>
#include <QLabel>
#include <QLocale>
#include <QStackedWidget>
#include <QTableView>
#include <QToolTip>

namespace matmulviz::ui {

namespace {

/// A row of the event table shows, on hover, the model's text and its block's facts and stack.
class RowTips : public QObject {
 public:
  explicit RowTips(QTableView* table) : QObject(table), table_(table) {
    table->viewport()->installEventFilter(this);
  }
  void set(std::shared_ptr<const SnapshotAllocations> allocations,
           const SnapshotAllocations::Device* device, const MemoryTimeline* timeline) {
    allocations_ = std::move(allocations);
    device_ = allocations_ ? device : nullptr;
    timeline_ = timeline;
  }

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override {
    if (event->type() != QEvent::ToolTip || !device_ || !timeline_)
      return QObject::eventFilter(watched, event);
    const auto* help = static_cast<QHelpEvent*>(event);
    const QModelIndex index = table_->indexAt(help->pos());
    if (!index.isValid() || size_t(index.row()) >= timeline_->events.size())
      return QObject::eventFilter(watched, event);
    const QString block =
        allocations_->blockText(*device_, timeline_->events[size_t(index.row())].allocationId);
    if (block.isEmpty()) return QObject::eventFilter(watched, event);
    QToolTip::showText(help->globalPos(),
                       preformatted(index.data(Qt::ToolTipRole).toString()) + block,
                       table_->viewport());
    return true;
  }

 private:
  QTableView* table_;
  std::shared_ptr<const SnapshotAllocations> allocations_;
  const SnapshotAllocations::Device* device_ = nullptr;
  const MemoryTimeline* timeline_ = nullptr;
};

}  // namespace

QWidget* MemoryView::makeChartStack() {
  bandsChart_ = new AllocationBandsChart;
  bandsChart_->setObjectName("memoryBandsChart");
  bandsChart_->setMinimumHeight(360);
  chartStack_ = new QStackedWidget;
  chartStack_->addWidget(chart_);
  chartStack_->addWidget(bandsChart_);
  rowTips_ = new RowTips(table_);
  // A click on the bands (x: the steps of allocs and frees) shows the allocator state after
  // that step's trace event in the segments panel (which marks the category chart, whose x is
  // the event itself).
  auto* picker = new EventPicker(bandsChart_);
  connect(picker, &EventPicker::picked, this, [this](qint64 step) {
    const SnapshotAllocations::Device* d =
        allocations_ ? allocations_->device(strategy_->currentText()) : nullptr;
    if (d) segments_->setTraceEvent(snapshot::eventAtStep(d->bands, double(step)));
  });
  connect(stackBy_, &QComboBox::activated, this,
          [this] { showStacking(strategy_->currentText()); });
  updateStackBy();
  return chartStack_;
}

void MemoryView::updateStackBy() {
  const bool snapshot = allocations_ || store_;
  stackByLabel_->setVisible(snapshot);
  stackBy_->setVisible(snapshot);
  stackBy_->setEnabled(allocations_ != nullptr);
  if (!allocations_) {  // the category chart, and the bands let go of the last snapshot
    chartStack_->setCurrentIndex(0);
    if (bandsChart_->allocationCount() > 0) bandsChart_->setDevice(nullptr, {});
  }
  if (store_) {
    stackBy_->setCurrentIndex(0);
    stackBy_->setToolTip(
        tr("Stacking by allocation needs every block of the snapshot in memory. This one has "
           "more than %1 events: it is read from its store on disk and drawn at level of "
           "detail, as one allocated band.")
            .arg(QLocale().toString(qlonglong(kStoreAboveEvents))));
    return;
  }
  stackBy_->setToolTip(
      preformatted(tr("category: allocated memory stacked by matmulviz's categories, derived "
                      "from each block's frames.\nallocation: each allocation its own band, "
                      "stacked as PyTorch's memory_viz draws its Active Memory Timeline; hover "
                      "a band for its block's stack.\n\n") +
                   QString::fromStdString(snapshot::categoryRulesText())));
}

void MemoryView::setSnapshotAllocations(std::shared_ptr<const SnapshotAllocations> allocations) {
  allocations_ = std::move(allocations);
  if (allocations_) stackBy_->setCurrentIndex(1);
  updateStackBy();
  if (!store_ && !sources_.isEmpty()) showStacking(strategy_->currentText());
}

void MemoryView::showStacking(const QString& name) {
  updateStackBy();
  const SnapshotAllocations::Device* device = allocations_ ? allocations_->device(name) : nullptr;
  const MemoryTimeline* timeline = nullptr;
  for (const Source& s : sources_)
    if (s.name == name) timeline = s.timeline;
  static_cast<RowTips*>(rowTips_)->set(allocations_, device, timeline);
  const bool bands = device && stackBy_->currentIndex() == 1;
  bandsChart_->setDevice(bands ? allocations_ : nullptr, name);
  chartStack_->setCurrentIndex(bands ? 1 : 0);
  scale_->setEnabled(!bands && timeline);
}

}  // namespace matmulviz::ui
