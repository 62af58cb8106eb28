#pragma once
// Two allocation sequences aligned event by event (core/report/sequence_alignment.h) as a table:
// one row per aligned row, what each side did there (alloc or free, the request's bytes), the
// live requests' bytes and memory_reserved on each side after it, and where the block was
// allocated. Numbers and strings only: the view colours the rows that are not a match from
// SignRole (+1) and the first divergence is a row index.

#include "core/report/compare_reports.h"

#include <QAbstractTableModel>

namespace matmulviz::ui {

class CompareEventsModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    Row,         ///< the aligned row's index
    Kind,        ///< "match", "size differs", "only in A", ...
    EventA,      ///< "alloc 750 KiB" (A's event), empty when A has none
    EventB,      ///< the same for B
    RequestedA,  ///< live requests' bytes after A's event
    RequestedB,  ///< after B's event
    Difference,  ///< RequestedB - RequestedA (matched rows)
    ReservedA,   ///< memory_reserved after A's event
    ReservedB,   ///< after B's event
    WhereA,      ///< A's op and source line of the block's allocation
    WhereB,      ///< B's
    ColumnCount
  };
  /// The unformatted value: qint64 bytes for byte columns (-1: none), QString otherwise.
  static constexpr int RawRole = Qt::UserRole + 1;
  /// +1 on every column of a row that is not a match (drawn as growth), else 0.
  static constexpr int SignRole = Qt::UserRole + 2;

  explicit CompareEventsModel(QObject* parent = nullptr);

  /// Shows `c`; `c.a` and `c.b` must outlive the model's use of them (ComparedFiles keeps
  /// them). Resets the model.
  void setSequence(const ComparedSequence& c);
  void clear();
  /// The first row that is not a match; -1 when none (or nothing shown).
  int firstDivergence() const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  const ComparedSequence* sequence_ = nullptr;
  ComparedSequence copy_;
};

}  // namespace matmulviz::ui
