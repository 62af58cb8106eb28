#pragma once
// Two strategies reports side by side (core/report/compare.h StrategiesComparison): one row per
// strategy, matched by name, with maxMem, curMem and the median time of A and B and B - A.
// Numbers and strings only: the view colours growth and shrink from SignRole.

#include "core/report/compare.h"

#include <QAbstractTableModel>

namespace matmulviz::ui {

class CompareStrategiesModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    Strategy,
    MaxMemA,  ///< bytes: max_memory_allocated since the inputs were made
    MaxMemB,
    MaxMemDifference,  ///< B - A
    CurMemA,           ///< bytes: memory_allocated after `out = strategy(...)`
    CurMemB,
    CurMemDifference,
    TimeA,  ///< seconds, median of the warm runs
    TimeB,
    TimeDifference,
    ColumnCount
  };
  /// The unformatted value: qint64 bytes, double seconds (NaN: not measured), QString.
  static constexpr int RawRole = Qt::UserRole + 1;
  /// On the three difference columns: -1 (B < A), 0, +1 (B > A), 0 when either side is missing.
  static constexpr int SignRole = Qt::UserRole + 2;

  explicit CompareStrategiesModel(QObject* parent = nullptr);
  /// Copies `c`. Resets the model.
  void setComparison(const StrategiesComparison& c);
  void clear();

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  /// DisplayRole: "2.06 GiB", "+96 MiB", "1.23 ms"; "absent" or "failed" for a strategy that is
  /// not in a report or failed there ("-" for its differences); ToolTipRole: the error.
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  QVariant raw(const StrategyDiff& d, int column) const;
  QString text(const StrategyDiff& d, int column) const;

  StrategiesComparison comparison_;
};

}  // namespace matmulviz::ui
