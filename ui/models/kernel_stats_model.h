#pragma once
// The Kernel view's tables: the launch's statistics (grid, block, threads, share inside C, loads
// per output, bytes, arithmetic intensity, simulation speed, max_rel_err, trace) and the
// simulator's diagnostics, one row each. Qt Core only: display strings, tooltips that say what
// a number means, and the raw number under Qt::UserRole for sorting and tests.

#include <QAbstractTableModel>
#include <QString>
#include <memory>
#include <vector>

#include "ui/models/kernel_launch.h"

namespace matmulviz::ui {

class KernelStatsModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { Name, Value, ColumnCount };
  explicit KernelStatsModel(QObject* parent = nullptr);

  /// Shows the statistics of `result` (null: no rows).
  void setResult(std::shared_ptr<const KernelLaunchResult> result);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

  /// The row named `name` ("threads", "share inside C", ...), or -1.
  int rowOf(const QString& name) const;

 private:
  struct Row {
    QString name;
    QString value;
    QString tip;
    QVariant raw;
  };
  void add(const char* name, const QString& value, const QString& tip, QVariant raw);
  void addLaunchRows(const KernelLaunchResult& result);  ///< kernel .. active threads
  void addWorkRows(const KernelLaunchResult& result);    ///< loads .. barriers
  void addRunRows(const KernelLaunchResult& result);     ///< simulation .. trace
  std::vector<Row> rows_;
};

class KernelDiagnosticsModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { Kind, Block, Thread, Array, Index, Message, ColumnCount };
  explicit KernelDiagnosticsModel(QObject* parent = nullptr);

  /// Lists the detailed diagnostics of `result` (the first LaunchOptions::maxDiagnostics; the
  /// counts in the statistics are exact).
  void setResult(std::shared_ptr<const KernelLaunchResult> result);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  std::shared_ptr<const KernelLaunchResult> result_;
};

}  // namespace matmulviz::ui
