#pragma once
// The run history as a table: one row per (run, strategy), in history order, and one row
// marked "(run failed)" with its message for a run that failed as a whole. Updates
// incrementally when the history appends a run, and resets when it is cleared or loaded.

#include "ui/models/run_history.h"

#include <QAbstractTableModel>
#include <QPointer>

namespace matmulviz::ui {

class StrategiesTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    Run,           ///< RunEntry::id
    Title,         ///< RunEntry::title
    Strategy,      ///< "strategy1"
    RequiresGrad,  ///< "none", "a", "c", "a,c"
    TimeMedianS,   ///< seconds (double), empty when not measured
    CurMemMiB,     ///< MiB (double, bytes / 2^20)
    MaxMemMiB,     ///< MiB (double)
    PredictedS,    ///< seconds from the cost model, empty without a profile
    MaxRelErr,     ///< max|out - ref| / max|ref|, empty on meta
    Status,        ///< "ok" or the error message
    ColumnCount
  };
  /// Extra role: the unformatted value (double/qint64/QString) for every column.
  static constexpr int RawRole = Qt::UserRole + 1;

  explicit StrategiesTableModel(QObject* parent = nullptr);
  /// The model follows `history` (not owned; may be nullptr; empties when it is destroyed).
  /// Resets the model.
  void setHistory(const RunHistory* history);
  const RunHistory* history() const { return history_; }

  /// Index into history()->entries() and into that entry's results of `row` (result -1: the
  /// row of a run that failed as a whole, with no results).
  struct RowRef {
    int entry = -1, result = -1;
  };
  RowRef rowRef(int row) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  /// DisplayRole: formatted text with units ("904 ms", "2.16 GiB", "-" for the memory of a
  /// failed run; core/util/format_units.h); RawRole and EditRole: the unformatted number
  /// (seconds, MiB as double), for sorting (QSortFilterProxyModel::setSortRole(RawRole));
  /// ToolTipRole: the error or what stayed alive and why; TextAlignmentRole: numbers
  /// right-aligned.
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

  /// Header row plus one line per row, raw values with full precision, RFC 4180 quoting.
  QString toCsv() const;

 private:
  void onAppended(int index);
  void rebuildRows();
  QVariant raw(const RowRef& ref, int column) const;
  /// The strategy and status columns of a run that failed as a whole (it has no results).
  QVariant failedRunRaw(const RunEntry& e, int column) const;

  QPointer<const RunHistory> history_;
  QVector<RowRef> rows_;
  QMetaObject::Connection appendedConn_, resetConn_, destroyedConn_;
};

/// RFC 4180 field quoting (quotes when the text holds a comma, quote or line break).
QString csvField(const QString& text);

}  // namespace matmulviz::ui
