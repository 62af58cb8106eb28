#pragma once
// The memory timeline of a plan's forward and backward, derived from the graph (not measured):
// the forward runs BudgetExplorer::forwardProgram in graph order, then the backward runs
// backwardProgram in PyTorch's order (recomputation just before its first use). A value is
// allocated at its node's step and freed after its last use in the same pass; a saved value stays
// alive from the forward until its last use in the backward; a recomputed value is allocated again
// in the backward; tangents live from the backward's start, gradients to its end. Views share their
// base's storage (counted once, alive while any view is used); tuples count through their items.
// Inputs and parameters are not counted (the caller keeps them alive either way). One row per step;
// the alive bytes split into four bands.

#include "ui/models/budget_explorer.h"

#include <QAbstractTableModel>
#include <QPointer>

#include <array>

namespace matmulviz::ui {

class BudgetTimelineModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Band { SavedBand, RecomputedBand, ForwardBand, BackwardBand, BandCount };
  enum Column {
    Step,
    Phase,  ///< "forward" or "backward"
    Node,
    Op,
    SavedBytes,       ///< alive after the step: saved for the backward
    RecomputedBytes,  ///< recomputed in the backward
    ForwardBytes,     ///< other forward values
    BackwardBytes,    ///< tangents, gradients and their temporaries
    TotalBytes,
    ColumnCount
  };
  static constexpr int RawRole = Qt::UserRole + 1;

  explicit BudgetTimelineModel(QObject* parent = nullptr);
  /// Follows `explorer` (not owned): recomputed on every plan.
  void setExplorer(const BudgetExplorer* explorer);

  static QString bandText(Band band);
  int stepCount() const { return static_cast<int>(nodes_.size()); }
  /// Steps 0 .. forwardSteps() - 1 are the forward, the rest the backward.
  int forwardSteps() const { return forwardSteps_; }
  /// Bytes alive after each step in `band`.
  const QVector<qint64>& bandSeries(Band band) const { return bands_[band]; }
  QVector<qint64> totalSeries() const;
  /// The first step where the total is largest; -1 when empty.
  int peakStep() const;
  QString toolTip(int step) const;
  QString nodeName(int step) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  void derive();

  QPointer<const BudgetExplorer> explorer_;
  QMetaObject::Connection planConn_;
  QVector<partitioner::NodeId> nodes_;
  int forwardSteps_ = 0;
  std::array<QVector<qint64>, BandCount> bands_;
};

}  // namespace matmulviz::ui
