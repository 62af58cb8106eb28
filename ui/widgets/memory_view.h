#pragma once
// The Memory view: the timeline of one strategy's run (allocated stacked by label category,
// requested and reserved as lines, the peak marked; hover for the event, its op and why the
// block is alive; zoom and pan; "scale to allocated") above the table of every allocator event.
// The header names the same peak as the chart (MemoryTimelineModel::peakText).

#include "core/report/strategies_report.h"

#include <QWidget>

#include <memory>

class QCheckBox;
class QComboBox;
class QLabel;
class QTableView;

namespace matmulviz::ui {

class MemoryTimelineChart;
class MemoryTimelineModel;

class MemoryView : public QWidget {
  Q_OBJECT
 public:
  explicit MemoryView(QWidget* parent = nullptr);

  /// Offers the report's strategies that recorded a timeline and shows the one with the
  /// largest peak (the most instructive).
  void setReport(std::shared_ptr<const StrategiesReport> report);
  /// Shows the timeline of `strategy` from the current report; false when it has none.
  bool showStrategy(const QString& strategy);
  void setPresentationMode(bool on);

  MemoryTimelineChart* chart() const { return chart_; }
  MemoryTimelineModel* model() const { return model_; }

 private:
  std::shared_ptr<const StrategiesReport> report_;
  QComboBox* strategy_ = nullptr;
  QLabel* summary_ = nullptr;
  QCheckBox* scale_ = nullptr;
  MemoryTimelineChart* chart_ = nullptr;
  MemoryTimelineModel* model_ = nullptr;
  QTableView* table_ = nullptr;
};

}  // namespace matmulviz::ui
