#pragma once
// The Memory view's segments panel for a PyTorch memory snapshot: the allocator's segments and
// blocks just after one trace event (core/io/allocator_history.h), painted to scale
// (SegmentsCanvas), with the event, the totals (reserved, allocated, active, requested, free,
// fragmentation) and what could not be replayed. A spin box and a slider scrub the trace's
// events (Left/Right step while the panel has focus); clicking a point of a linked chart or a
// row of a linked table shows the state at that row's trace event, and scrubbing selects the
// matching row in the linked tables and marks it on the linked charts. Without a history for the
// shown device (a report, a Python run) the panel hides; a snapshot whose state cannot be kept
// shows the panel disabled with the reason.

#include "core/io/allocator_history.h"

#include <QVector>
#include <QWidget>

#include <memory>

class QLabel;
class QSlider;
class QSpinBox;
class QTableView;

namespace matmulviz::ui {

class AllocatorStateModel;
class ChartView;
class EventPicker;
class SegmentsCanvas;

using AllocatorHistories = QVector<std::shared_ptr<const snapshot::AllocatorHistory>>;

class SegmentsPanel : public QWidget {
  Q_OBJECT
 public:
  explicit SegmentsPanel(QWidget* parent = nullptr);

  /// One history per device of an opened snapshot (empty: the panel hides, unless
  /// `unavailable` says why there is none: then it shows disabled with that reason).
  void setHistories(AllocatorHistories histories, const QString& unavailable = {});
  /// Shows the device named `name` ("cuda:0") at timeline row `row` (the view's peak); false
  /// (and hidden) when no history has that name.
  bool showDevice(const QString& name, int64_t row);
  /// The state at the trace event of the shown device's timeline row `row`.
  void selectTimelineRow(int64_t row);
  /// The state just after PyTorch's trace entry `event` (-1: before the first), shown as the
  /// timeline row (the event) it falls in; emits timelineRowSelected.
  void setTraceEvent(int64_t event);
  int64_t traceEvent() const;
  /// The event shown: a row of the device's timeline, as the Memory view numbers events (the
  /// spin box and slider count these); -1 before the first.
  int64_t event() const { return row_; }
  /// Clicks and the current row of `table` (rows: the timeline's events) select; scrubbing
  /// selects its row.
  void linkTable(QTableView* table);
  /// Clicks on `chart` (x: the timeline's event) select; the selected event is marked there.
  void linkChart(ChartView* chart);
  void setPresentationMode(bool on);

  AllocatorStateModel* model() const { return model_; }
  SegmentsCanvas* canvas() const { return canvas_; }
  /// The reason shown when disabled; empty when enabled.
  QString unavailableReason() const { return unavailable_; }

 signals:
  /// The timeline row of the event the panel moved to (by its spin box, slider or keys).
  void timelineRowSelected(qint64 row);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void showState();
  void step(int delta);
  /// The state after event `row` (a timeline row; its trace entry, or before the trace for
  /// the rows at time 0); emits timelineRowSelected unless updating.
  void setRow(int64_t row);

  AllocatorHistories histories_;
  QString unavailable_;
  AllocatorStateModel* model_ = nullptr;
  SegmentsCanvas* canvas_ = nullptr;
  QSpinBox* spin_ = nullptr;
  QSlider* slider_ = nullptr;
  QLabel* title_ = nullptr;
  int64_t row_ = -1;
  QLabel* event_ = nullptr;
  QLabel* totals_ = nullptr;
  QLabel* notes_ = nullptr;
  QWidget* body_ = nullptr;
  QVector<EventPicker*> pickers_;
  bool updating_ = false;
};

}  // namespace matmulviz::ui
