#pragma once
// The allocator's segments and their blocks after one trace event of a PyTorch memory snapshot
// (core/io/allocator_history.h) as a tree: one top-level row per segment (by address), its
// blocks as children (allocated, pending free, free). Also the texts the segments panel shows:
// the event, the totals, a block's or a segment's hover text with its frames. Qt Core only.

#include "core/io/allocator_history.h"

#include <QAbstractItemModel>
#include <QString>
#include <QVector>

#include <memory>

namespace matmulviz::ui {

class AllocatorStateModel : public QAbstractItemModel {
  Q_OBJECT
 public:
  enum Column {
    Address,    ///< "0x7f3a00000000"
    Size,       ///< bytes (RawRole) or "2.00 MiB"
    Requested,  ///< a block's requested bytes; empty for a segment or a free block
    State,      ///< a block's "allocated", "pending free", "free"; a segment's pool
    Stream,     ///< the CUDA stream (a segment's; a block's is its segment's)
    Frame,      ///< the innermost frame, "train.py:42 forward"; empty without frames
    ColumnCount
  };
  static constexpr int RawRole = Qt::UserRole + 1;  ///< unformatted value

  explicit AllocatorStateModel(QObject* parent = nullptr);

  /// Shows `history` (nullptr clears) at its last event, the snapshot's own state.
  void setHistory(std::shared_ptr<const snapshot::AllocatorHistory> history);
  const snapshot::AllocatorHistory* history() const { return history_.get(); }
  /// The state just after trace event `event` (-1: before the first; clamped). Resets the model.
  void setEvent(int64_t event);
  int64_t event() const { return state_.event; }
  const snapshot::AllocatorState& state() const { return state_; }

  QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
  QModelIndex parent(const QModelIndex& child) const override;
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

  /// The blocks of segment `segment`: state().blocks[first, first + count).
  int firstBlock(int segment) const { return firstBlock_.value(segment); }
  int blockCount(int segment) const;
  /// Hover texts: address, size, requested size, state, stream and frames (innermost first).
  QString blockText(int block) const;
  QString segmentText(int segment) const;
  /// "after event 12 of 40 · trace entry 20: free_completed 0x7f3a00200000, 1.00 MiB at
  /// train.py:7", or "before the first of 40 events"; empty without a history. `row`: the event
  /// (the row of the device's timeline, as the Memory view numbers events: allocations, frees
  /// and segment changes; -1 before the first), `rows` how many there are; the trace entry is
  /// PyTorch's (the state's event).
  QString eventText(int64_t row, int64_t rows) const;
  /// "reserved 40.0 MiB · allocated 12.0 MiB · active 14.0 MiB · requested ... · free 26.0 MiB
  /// (largest 18.0 MiB) · fragmentation 31%"
  QString totalsText() const;

 private:
  QString framesText(snapshot::StackId stack) const;
  QString frameText(snapshot::StackId stack) const;
  QVariant segmentData(int segment, int column, int role) const;
  QVariant blockData(int block, int column, int role) const;

  std::shared_ptr<const snapshot::AllocatorHistory> history_;
  snapshot::AllocatorState state_;
  QVector<int> firstBlock_;  ///< per segment, plus one past the last block at the end
};

/// "allocated", "pending free", "free" (an inactive block: cached, reusable).
QString blockStateText(snapshot::BlockState state);
/// "0x7f3a00000000"
QString addressText(int64_t address);
/// A CUDA stream handle: "0" (the default stream) or "0x5583a1b2c3d0".
QString streamText(int64_t stream);

}  // namespace matmulviz::ui
