#pragma once
// The main window: the scenario panel (a dock) beside seven views in tabs (Kernel, Strategies,
// Memory, Gradients, Multi-head, Budget, Program), runs on a worker thread with progress and Cancel
// in the status bar, classroom mode, and persistence (window layout and last scenario in QSettings,
// the run history in a JSON file in the user's data folder, saved after every run and on exit).
// Files open through File > Open (Ctrl+O), File > Open Recent, drag and drop and the command
// line (main_window_open.cpp): a report's runs join the history and the views, a PyTorch
// snapshot shows in the Memory view, a preset fills the scenario panel.
// The seventh tab is the Program view: a Python script (or a Python run's report) opened here, and
// Ctrl+R / Esc run and cancel its script while it is the current tab.

#include "core/costmodel/cost_model.h"
#include "core/report/strategies_report.h"
#include "ui/models/open_file.h"
#include "ui/models/scenario.h"

#include <QMainWindow>

#include <memory>
#include <optional>

class QAction;
class QDragEnterEvent;
class QDropEvent;
class QMenu;
class QLabel;
class QProgressBar;
class QPushButton;
class QTabWidget;

namespace matmulviz::ui {

class CompareController;
class FileLoader;
class BudgetView;
class GradientsView;
class KernelView;
class LadderView;
class MemoryView;
class MultiheadView;
class ProgramView;
class RunController;
class RunHistory;
class ScenarioPanel;
class StrategiesView;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  /// `historyPath`: where the run history is kept (empty: the user's data folder).
  explicit MainWindow(const QString& historyPath = QString(), QWidget* parent = nullptr);
  ~MainWindow() override;

  enum class View { Kernel, Strategies, Memory, Gradients, Multihead, Budget, Program };
  void showView(View v);
  /// Classroom mode: full screen, larger fonts, high-contrast palette, large narration.
  void setClassroomMode(bool on);
  bool classroomMode() const { return classroom_; }
  /// True while a lesson's temporary scenario is shown (View > Lessons).
  bool inLesson() const { return beforeLesson_.has_value(); }

  ScenarioPanel* scenarioPanel() const { return panel_; }
  KernelView* kernelView() const { return kernelView_; }
  StrategiesView* strategiesView() const { return strategiesView_; }
  MemoryView* memoryView() const { return memoryView_; }
  GradientsView* gradientsView() const { return gradientsView_; }
  MultiheadView* multiheadView() const { return multiheadView_; }
  LadderView* ladderView() const { return ladderView_; }
  BudgetView* budgetView() const { return budgetView_; }
  ProgramView* programView() const { return programView_; }
  RunController* runController() const { return runner_; }
  RunHistory* history() const { return history_; }
  FileLoader* fileLoader() const { return loader_; }
  /// Compare Reports… (Ctrl+Shift+D), the Strategies view's Compare runs (Ctrl+D), --compare.
  CompareController* compareController() const { return compare_; }
  /// The files opened last, most recent first (QSettings "recentFiles"; at most 8).
  QStringList recentFiles() const;
  /// The message of the last failed run ("" when the last run succeeded).
  QString lastError() const;
  /// The GPU profile whose predicted times runs and opened reports get from now on (default
  /// h100; `matmulviz --model KEY|FILE`, a file written by `matmulviz-cli calibrate`).
  void setGpuProfile(const costmodel::GpuProfile& profile) { gpuProfile_ = profile; }
  const costmodel::GpuProfile& gpuProfile() const { return gpuProfile_; }

 public slots:
  /// Runs the strategies; in the Program view, runs its script.
  void runStrategies();
  void cancelRun();
  /// Asks for files (reports, presets, PyTorch snapshots) and opens them.
  void openFileDialog();
  /// Opens `paths` in order, each read on a worker thread (FileLoader): a report's runs join
  /// the run history and show in the Strategies and Memory views (the last one opened), a
  /// snapshot shows in the Memory view, a preset fills the scenario panel. A file that cannot be
  /// opened shows a message box naming the file and the problem; nothing already open changes.
  void openFiles(const QStringList& paths);
  void exportAll();
  /// Shows `message` above the views (wrapped: a long message never widens the window).
  void showError(const QString& message);

 protected:
  void closeEvent(QCloseEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  void buildMenus();
  void buildLessonsMenu(QMenu* view);
  void buildStatusBar();
  void wireRunner();
  void onFinished(std::shared_ptr<const StrategiesReport> report, const Scenario& scenario,
                  double wallSeconds);
  void onFailed(const QString& message, const Scenario& scenario);
  void restoreSession();
  void saveSession();
  void saveHistory();
  void wireFileLoader();
  void onFileLoaded(const OpenedFile& file);
  /// A multi-head, budget or einsum report shown where it belongs (main_window_reports.cpp);
  /// the status line to show, empty when `file` is none of them.
  QString openReportWithoutTimeline(const OpenedFile& file);
  void onOpenFailed(const QString& path, const QString& message);
  void addRecentFile(const QString& path);
  void rebuildRecentMenu();
  void startLesson(int lesson);
  /// Back to the scenario the user had before the first lesson (a lesson's is temporary).
  void leaveLesson();

  ScenarioPanel* panel_ = nullptr;
  QTabWidget* tabs_ = nullptr;
  KernelView* kernelView_ = nullptr;
  StrategiesView* strategiesView_ = nullptr;
  MemoryView* memoryView_ = nullptr;
  GradientsView* gradientsView_ = nullptr;
  MultiheadView* multiheadView_ = nullptr;
  LadderView* ladderView_ = nullptr;
  BudgetView* budgetView_ = nullptr;
  ProgramView* programView_ = nullptr;
  RunController* runner_ = nullptr;
  RunHistory* history_ = nullptr;
  FileLoader* loader_ = nullptr;
  CompareController* compare_ = nullptr;
  QMenu* recentMenu_ = nullptr;
  QLabel* banner_ = nullptr;
  QLabel* statusText_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QPushButton* cancel_ = nullptr;
  QAction* classroomAction_ = nullptr;
  QAction* leaveLessonAction_ = nullptr;
  std::optional<Scenario> beforeLesson_;  ///< set while a lesson's scenario is shown
  QString historyPath_;
  // the memory model's default GPU (core/memory/pytorch_model.h), so both speak of one machine
  costmodel::GpuProfile gpuProfile_ = *costmodel::findGpuProfile("h200");
  std::shared_ptr<const StrategiesReport> lastReport_;
  bool classroom_ = false;
  QFont normalFont_;
  QPalette normalPalette_;
};

}  // namespace matmulviz::ui
