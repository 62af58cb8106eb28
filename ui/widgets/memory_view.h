#pragma once
// The Memory view: the timeline of one strategy's run (allocated stacked by label category,
// requested and reserved as lines, the peak marked; hover for the event, its op and why the
// block is alive; zoom and pan; "scale to allocated") above the table of every allocator event.
// The header names the same peak as the chart (MemoryTimelineModel::peakText).
// It shows a run made here, an opened report (a report without a timeline shows each
// strategy's curMem, maxMem and what stays alive and why, from the report), or one device of an
// opened PyTorch memory snapshot; a snapshot of millions of events is read from its store on
// disk and drawn at level of detail (ui/charts/big_timeline_chart.h) above a table of its events
// read as scrolled (ui/models/stored_events_model.h). Under a snapshot's timeline, the segments
// panel (ui/widgets/segments_panel.h): the allocator's segments and blocks at the event
// selected in the chart or the table, at the peak when the snapshot opens.
// For a snapshot, "stack by" chooses between the category-stacked chart and the allocations
// stacked as PyTorch's memory_viz draws them (ui/charts/allocation_bands_chart.h, the
// default), and a row of the event table shows its block's stack on hover
// (memory_view_snapshot.cpp); a snapshot held in a store offers category only.

#include "core/report/strategies_report.h"
#include "ui/models/open_file.h"
#include "ui/widgets/segments_panel.h"

#include <QVector>
#include <QWidget>

#include <memory>

class QCheckBox;
class QComboBox;
class QLabel;
class QStackedWidget;
class QTableView;

namespace matmulviz::ui {

class AllocationBandsChart;
class BigTimelineChart;
class MemoryTimelineChart;
class MemoryTimelineModel;
class StoredEventsModel;
struct SnapshotAllocations;

class MemoryView : public QWidget {
  Q_OBJECT
 public:
  explicit MemoryView(QWidget* parent = nullptr);

  /// Offers the report's strategies that recorded a timeline and shows the one with the
  /// largest peak (the most instructive). Without any timeline, shows the report's memory
  /// summary instead (hasTimeline() is then false).
  void setReport(std::shared_ptr<const StrategiesReport> report);
  /// Offers `timelines` (a PyTorch snapshot's devices, a Python run) opened from `fileName`
  /// under `chooserLabel` ("Device", "Script") and shows the one with the largest peak; `note`
  /// follows the peak in the header.
  void setTimelines(const QString& fileName, const QString& chooserLabel,
                    std::shared_ptr<const std::vector<NamedTimeline>> timelines,
                    const QString& note);
  /// Offers the devices of `store` (a large snapshot's timelines on disk) and shows the one
  /// with the largest peak in the level-of-detail chart, above the table of its events.
  void setStore(const QString& fileName, std::shared_ptr<const store::TimelineStore> store,
                const QString& note);
  /// The allocator histories of the snapshot just shown (setTimelines, setStore), one per
  /// device; `unavailable` says why there are none (the panel shows disabled with it).
  void setAllocatorHistories(AllocatorHistories histories, const QString& unavailable = {});
  /// Shows the timeline named `name` (a strategy of the report, or a snapshot's device); false
  /// when there is none of that name.
  bool showStrategy(const QString& name);
  /// After setTimelines or setStore of a snapshot: its allocations (nullptr for a store, which
  /// offers no stacking by allocation) enable "stack by", set to allocation.
  void setSnapshotAllocations(std::shared_ptr<const SnapshotAllocations> allocations);
  void setPresentationMode(bool on);
  /// True when a timeline is shown (not the summary of a report without one).
  bool hasTimeline() const;
  /// The text shown for a report without a timeline (empty otherwise).
  QString summaryText() const;

  MemoryTimelineChart* chart() const { return chart_; }
  BigTimelineChart* bigChart() const { return bigChart_; }
  AllocationBandsChart* bandsChart() const { return bandsChart_; }
  StoredEventsModel* storedEvents() const { return storedEvents_; }
  MemoryTimelineModel* model() const { return model_; }
  SegmentsPanel* segments() const { return segments_; }

 private:
  /// One timeline the view can show; `timeline` lives as long as `owner_`.
  struct Source {
    QString name;
    const MemoryTimeline* timeline = nullptr;
    qint64 peakBytes = 0;
    qint64 currentBytes = -1;  ///< curMem after the statement; -1 for an opened timeline
  };
  void offer(const QString& chooserLabel, const QString& noTimeline);
  void showReportSummary();
  bool showStoredDevice(const QString& name);
  QWidget* makeStorePage();
  // memory_view_snapshot.cpp: "stack by" and the snapshot's hovers.
  QWidget* makeChartStack();
  void updateStackBy();
  void showStacking(const QString& name);

  std::shared_ptr<const void> owner_;  ///< the report or the snapshot's devices
  std::shared_ptr<const StrategiesReport> report_;
  QString note_;  ///< setTimelines' note
  QVector<Source> sources_;
  QLabel* chooserLabel_ = nullptr;
  QComboBox* strategy_ = nullptr;
  QLabel* summary_ = nullptr;
  QCheckBox* scale_ = nullptr;
  QStackedWidget* pages_ = nullptr;
  QLabel* reportSummary_ = nullptr;
  MemoryTimelineChart* chart_ = nullptr;
  MemoryTimelineModel* model_ = nullptr;
  std::shared_ptr<const store::TimelineStore> store_;  ///< setStore's; then sources_ is empty
  BigTimelineChart* bigChart_ = nullptr;
  StoredEventsModel* storedEvents_ = nullptr;
  QTableView* table_ = nullptr;
  SegmentsPanel* segments_ = nullptr;
  QTableView* storedEventsTable_ = nullptr;
  std::shared_ptr<const SnapshotAllocations> allocations_;
  QLabel* stackByLabel_ = nullptr;
  QComboBox* stackBy_ = nullptr;
  QStackedWidget* chartStack_ = nullptr;
  AllocationBandsChart* bandsChart_ = nullptr;
  QObject* rowTips_ = nullptr;  ///< the event table's hover for a snapshot's blocks
};

}  // namespace matmulviz::ui
