#pragma once
// "What is alive at the peak" of a Python run as a tree: one row per source line (file:line and
// function) that allocated a block alive at the peak, largest first, and under it one row per
// owner (what kept those blocks alive: saved for which backward node, or a Python reference).

#include "ui/models/program_run.h"

#include <QAbstractItemModel>

#include <memory>

namespace matmulviz::ui {

class PeakTableModel : public QAbstractItemModel {
  Q_OBJECT
 public:
  enum Column {
    Where,   ///< "peak_lines.py:21 in direct" (a line row) or the owner (an owner row)
    Bytes,   ///< block bytes alive at the peak
    Blocks,  ///< how many blocks
    Share,   ///< of the peak's allocated bytes, percent
    Code,    ///< the source line (line rows)
    ColumnCount
  };
  static constexpr int RawRole = Qt::UserRole + 1;  ///< unformatted value (bytes, blocks)
  /// The script line (1-based) of a row, 0 when the row's frame is in another file.
  static constexpr int ScriptLineRole = Qt::UserRole + 2;

  explicit PeakTableModel(QObject* parent = nullptr);
  /// Shows `run`'s peak (nullptr clears). Resets the model.
  void setRun(std::shared_ptr<const ProgramRun> run);

  /// The top-level row of script line `line`, invalid when that line holds nothing at the peak.
  QModelIndex indexOfLine(int line) const;

  QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
  QModelIndex parent(const QModelIndex& child) const override;
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  /// internalId: 0 for a line row, 1 + its line row's number for an owner row.
  QVariant lineData(const ProgramRun::PeakGroup& g, int column, int role) const;
  QVariant ownerData(const ProgramRun::OwnerGroup& o, int column, int role) const;
  QString share(qint64 bytes) const;

  std::shared_ptr<const ProgramRun> run_;
};

}  // namespace matmulviz::ui
