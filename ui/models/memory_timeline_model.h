#pragma once
// One run's memory timeline (MemoryTimeline of a StrategyRun recorded with
// RunConfig::recordTimeline) as a table, one row per allocator event, plus the per-event
// series a chart needs: allocated, requested, reserved, and allocated split by category.
//
// Categories come with each allocation record (AllocationRecord::category): the engine sets
// them where it allocates (core/memory/memory_category.h says who sets which); nothing here
// reads a label to decide. Segment events (no record) change no category.

#include "core/report/strategies_report.h"

#include <QAbstractTableModel>
#include <QString>
#include <QVector>

#include <array>

namespace matmulviz::ui {

/// memoryCategoryName as the view shows it: "inputs", "gathered copy", "outputs", "saved for
/// backward", "gradients", "other".
QString memoryCategoryText(MemoryCategory c);
/// A block named by its label in a peak's description: "block x [64, 64] at train.py:3"; a
/// snapshot's unnamed block, labelled "block 0x7f7176dff800" already, as it is.
QString blockPhrase(const QString& label);

class MemoryTimelineModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    Index,      ///< event index, 0-based
    TimeUs,     ///< microseconds since the allocator was made
    Op,         ///< the op that caused the event ("bmm", "index")
    Kind,       ///< "alloc", "free", "segment_alloc", ... (memoryEventKindName)
    Label,      ///< the record's label ("c[q]"), empty for segment events
    Category,   ///< memoryCategoryText of the record's category
    Bytes,      ///< block or segment bytes of the event
    Allocated,  ///< memory_allocated after the event, bytes
    Requested,  ///< sum of the exact requests after the event, bytes
    Reserved,   ///< memory_reserved after the event, bytes
    WhyAlive,   ///< why the record is alive at the statement end, or "freed"
    ColumnCount
  };
  static constexpr int RawRole = Qt::UserRole + 1;  ///< unformatted value

  explicit MemoryTimelineModel(QObject* parent = nullptr);

  /// Copies what the model needs from `t` (not kept). Resets the model.
  void setTimeline(const MemoryTimeline& t, const QString& strategy);
  void clear();
  QString strategy() const { return strategy_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

  // For the chart. Event indices are 0 .. eventCount() - 1; values in bytes.
  int eventCount() const { return static_cast<int>(allocated_.size()); }
  const QVector<qint64>& allocatedSeries() const { return allocated_; }
  const QVector<qint64>& requestedSeries() const { return requested_; }
  const QVector<qint64>& reservedSeries() const { return reserved_; }
  /// Bytes allocated by records of category `c` after each event; the categories sum to
  /// allocatedSeries() at every event.
  const QVector<qint64>& categorySeries(MemoryCategory c) const;
  /// The first event after the end of the statement `out = strategy(...)` (what follows is
  /// the backward, when it ran); -1 when no event follows it.
  int statementEndEvent() const { return statementEndEvent_; }
  /// The first event at which allocated reaches its maximum over the whole timeline (backward
  /// included); -1 when empty. The one peak the Memory view shows, in its header and its chart.
  int peakEvent() const { return peakEvent_; }
  qint64 peakAllocatedBytes() const;
  /// The same up to the end of the statement `out = strategy(...)`: the run's maxMem. Equals
  /// peakEvent() when no backward follows the statement.
  int statementPeakEvent() const { return statementPeakEvent_; }
  qint64 statementPeakBytes() const;
  /// "5.10 MiB at event 2020 (op SelectBackward0, during backward)": the peak as header and
  /// chart both say it; empty when there are no events.
  QString peakText() const;
  QString opAt(int event) const;
  QString labelAt(int event) const;
  QString whyAliveAt(int event) const;
  /// "event 1234 (alloc 2048 MiB), op index: c[q], saved as mat2 of ... because a requires grad"
  QString tooltipAt(int event) const;

  /// Header row plus one line per event, raw values.
  QString toCsv() const;

 private:
  struct Row {
    double timeUs = 0;
    qint64 bytes = 0;
    qint32 op = -1;
    qint32 record = -1;  ///< index into records_, -1 for segment events
    MemoryEventKind kind = MemoryEventKind::Alloc;
  };
  struct Record {
    QString label, why;
    bool alive = false;  ///< still allocated at the end of the recording
    MemoryCategory category = MemoryCategory::Other;
  };
  QVariant raw(int row, int column) const;

  QString strategy_;
  QVector<Row> rows_;
  QVector<Record> records_;
  QStringList opNames_;
  QVector<qint64> allocated_, requested_, reserved_;
  std::array<QVector<qint64>, kMemoryCategoryCount> byCategory_;
  int peakEvent_ = -1;
  int statementPeakEvent_ = -1;
  int statementEndEvent_ = -1;
};

}  // namespace matmulviz::ui
