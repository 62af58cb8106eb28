#pragma once
// The difference of two memory timelines (core/report/compare.h) as a table, as heaptrack's diff
// mode lists it: the peak allocated and the peak reserved on top, then one row per label (or per
// category) with A's bytes, B's bytes and B - A, sorted by |B - A|. Which rows follow the peaks
// is the grouping: the bytes alive at the peak by label, by category, or each label's
// allocations over the whole run. Numbers and strings only: the view colours growth and shrink
// from SignRole.

#include "core/report/compare.h"

#include <QAbstractTableModel>
#include <QString>
#include <QVector>

namespace matmulviz::ui {

class CompareMemoryModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    Name,        ///< "peak allocated", a label ("c[q]") or a category ("gathered copy")
    What,        ///< "peak", "label at the peak", "category at the peak", "allocated over the run"
    ABytes,      ///< bytes in A
    BBytes,      ///< bytes in B
    Difference,  ///< B - A, bytes
    Blocks,      ///< allocations "1 -> 2" (grouping AllocationsByLabel), else empty
    ColumnCount
  };
  enum class Grouping { PeakByLabel, PeakByCategory, AllocationsByLabel };
  /// The unformatted value: qint64 bytes for the byte columns, QString otherwise.
  static constexpr int RawRole = Qt::UserRole + 1;
  /// -1 (B - A < 0: shrink), 0 or +1 (growth), on every column of the row.
  static constexpr int SignRole = Qt::UserRole + 2;

  explicit CompareMemoryModel(QObject* parent = nullptr);

  /// Copies what the table needs from `c`. Resets the model.
  void setComparison(const TimelineComparison& c);
  void clear();
  void setGrouping(Grouping g);
  Grouping grouping() const { return grouping_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  /// DisplayRole: sizes with units ("2.06 GiB"), differences with their sign ("+2.06 GiB");
  /// RawRole: the number; SignRole: the row's direction; TextAlignmentRole: numbers right.
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;
  /// Header row plus one line per row, raw values, RFC 4180 quoting.
  QString toCsv() const;

 private:
  struct Row {
    QString name, what, blocks;
    qint64 a = 0, b = 0;
  };
  void rebuildRows();

  TimelineComparison comparison_;
  bool has_ = false;
  Grouping grouping_ = Grouping::PeakByLabel;
  QVector<Row> rows_;
};

}  // namespace matmulviz::ui
