#pragma once
// The Strategies view: time and memory charts over the session's run history (bars of the
// latest run of each requires_grad setting side by side, or lines over runs), the table of
// every run x strategy, and a panel explaining each strategy's memory in the last report
// ("c[q] 2048 MiB kept alive: saved as mat2 of BmmBackward0 because a requires grad").

#include "core/report/strategies_report.h"

#include <QVector>
#include <QWidget>

#include <memory>

class QComboBox;
class QPushButton;
class QTableView;
class QTextBrowser;

namespace matmulviz::ui {

class RunHistory;
class StrategiesChart;
class StrategiesTableModel;

class StrategiesView : public QWidget {
  Q_OBJECT
 public:
  explicit StrategiesView(RunHistory* history, QWidget* parent = nullptr);

  /// Shows `report`'s explanation (the charts follow the history by themselves).
  void setReport(std::shared_ptr<const StrategiesReport> report);
  void setPresentationMode(bool on);

  StrategiesChart* timeChart() const { return timeChart_; }
  StrategiesChart* memoryChart() const { return memoryChart_; }
  StrategiesTableModel* tableModel() const { return table_; }
  /// The explanation panel's text (plain), for tests.
  QString explanation() const;
  /// The ids (RunEntry::id) of the runs with a row selected in the table, in history order.
  QVector<int> selectedRunIds() const;
  QTableView* tableView() const { return tableView_; }

 signals:
  /// "Compare runs" (Ctrl+D) with the rows of exactly two runs selected: A is the earlier run.
  void compareRequested(int runIdA, int runIdB);

 private:
  QWidget* buildToolbar();
  /// The run table under a "Compare runs" button.
  QWidget* buildRunsPanel();
  static QString explain(const StrategiesReport& report);

  RunHistory* history_;
  StrategiesChart* timeChart_ = nullptr;
  StrategiesChart* memoryChart_ = nullptr;
  StrategiesTableModel* table_ = nullptr;
  QTableView* tableView_ = nullptr;
  QTextBrowser* explanation_ = nullptr;
  QComboBox* layout_ = nullptr;
  QComboBox* memoryMetric_ = nullptr;
  QPushButton* compare_ = nullptr;
};

}  // namespace matmulviz::ui
