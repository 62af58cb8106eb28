#pragma once
// The Compare window: two reports or two runs side by side and their difference, as heaptrack's
// diff mode shows two profiles. Memory page: a compared timeline (a strategy, a script, a
// device) with both timelines on one event axis, B - A by label at the peak as bars, and the
// difference table (the peaks on top, then labels or categories by |B - A|; growth red, shrink
// green). Strategies page: maxMem, curMem or time of each strategy, A beside B, and the table of
// both runs' rows side by side with B - A. Events page: a Python run and a snapshot (or two of
// either) aligned event by event (core/report/sequence_alignment.h): the first divergence named
// above the table of aligned rows, which opens on it. What cannot be compared (no timeline in a
// report) is said above, with what to rerun.

#include "ui/models/compared_files.h"

#include <QWidget>

#include <memory>

class QComboBox;
class QLabel;
class QStackedWidget;
class QTabWidget;
class QTableView;

namespace matmulviz::ui {

class CompareDiffChart;
class CompareEventsModel;
class CompareMemoryModel;
class CompareStrategiesChart;
class CompareStrategiesModel;
class CompareTimelineChart;
class MemoryTimelineModel;

class CompareWindow : public QWidget {
  Q_OBJECT
 public:
  explicit CompareWindow(QWidget* parent = nullptr);
  ~CompareWindow() override;

  /// Shows `files` (kept alive here): the first timeline pair on the Memory page (the Strategies
  /// page when there is none), the strategies when both are strategies reports.
  void setComparison(std::shared_ptr<const ComparedFiles> files);
  std::shared_ptr<const ComparedFiles> comparison() const { return files_; }
  /// Shows the timeline pair named `name` (ComparedTimeline::name); false when there is none.
  bool showTimeline(const QString& name);
  enum class Page { Memory, Strategies, Events };
  void showPage(Page p);
  void setPresentationMode(bool on);

  /// The header: both names, what differs in how they ran, and the notes.
  QString headerText() const;
  CompareMemoryModel* memoryModel() const { return memoryModel_; }
  CompareStrategiesModel* strategiesModel() const { return strategiesModel_; }
  CompareTimelineChart* timelineChart() const { return timelineChart_; }
  CompareDiffChart* differenceChart() const { return diffChart_; }
  CompareStrategiesChart* strategiesChart() const { return strategiesChart_; }
  QTableView* memoryTable() const { return memoryTable_; }
  QTableView* strategiesTable() const { return strategiesTable_; }
  CompareEventsModel* eventsModel() const { return eventsModel_; }
  QTableView* eventsTable() const { return eventsTable_; }
  /// The Events page's summary: the first divergence (or "no divergence"), each side's start,
  /// and how the totals went.
  QString eventsSummary() const;

 private:
  QWidget* buildMemoryPage();
  QWidget* buildStrategiesPage();
  QWidget* buildEventsPage();
  void showSequence(int index);
  void showPair(int index);
  void updateDiffChart();

  std::shared_ptr<const ComparedFiles> files_;
  QLabel* header_ = nullptr;
  QTabWidget* tabs_ = nullptr;
  QComboBox* timeline_ = nullptr;
  QComboBox* grouping_ = nullptr;
  QStackedWidget* memoryPages_ = nullptr;
  QLabel* noTimeline_ = nullptr;
  QStackedWidget* strategyPages_ = nullptr;
  QLabel* noStrategies_ = nullptr;
  QComboBox* metric_ = nullptr;
  std::unique_ptr<MemoryTimelineModel> modelA_, modelB_;
  CompareMemoryModel* memoryModel_ = nullptr;
  CompareStrategiesModel* strategiesModel_ = nullptr;
  CompareTimelineChart* timelineChart_ = nullptr;
  CompareDiffChart* diffChart_ = nullptr;
  CompareStrategiesChart* strategiesChart_ = nullptr;
  QTableView* memoryTable_ = nullptr;
  QTableView* strategiesTable_ = nullptr;
  QComboBox* sequence_ = nullptr;
  QLabel* eventsSummary_ = nullptr;
  QStackedWidget* eventPages_ = nullptr;
  QLabel* noEvents_ = nullptr;
  CompareEventsModel* eventsModel_ = nullptr;
  QTableView* eventsTable_ = nullptr;
};

}  // namespace matmulviz::ui
