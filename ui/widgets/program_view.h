#pragma once
// The Program view: a Python script in an editor beside the memory timeline of its last run,
// linked both ways, and what was alive at the run's peak (a table by line and owner, and stacked
// bars like a flame graph of the peak). Run (Ctrl+R in the main window) saves the script and
// runs it through the matmulviz module in a separate process (ProgramRunner) with the elapsed
// time, a busy bar and Cancel; its stdout and stderr show in the output pane. A script that
// fails shows its traceback there and still shows the report of what ran.
// Links: a click on the timeline highlights the line that allocated the block of that event;
// the cursor on a line (or a click in the table or the bars) lights up that line's allocations
// in the timeline. The margin beside each line: bytes allocated, bytes held at the peak.
// A script that imports PyTorch runs under matmulviz.simulate: the row under the buttons picks
// its interpreter (its PyTorch), GPU, capacity and arguments, and "Largest batch…" searches the
// argument holding {} for the largest value that fits, drawn in the "Largest batch" tab.

#include "core/report/python_report.h"
#include "core/report/search_results.h"

#include <QWidget>

#include <memory>

class QComboBox;
class QLabel;
class QLineEdit;
class QTabWidget;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QTimer;
class QTreeView;

namespace matmulviz::ui {

class PeakFlameBar;
class PeakTableModel;
class ProgramEditor;
class ProgramRun;
class ProgramRunner;
class ProgramTimelineChart;
class SearchChart;
struct SimulationSettings;

class ProgramView : public QWidget {
  Q_OBJECT
 public:
  explicit ProgramView(QWidget* parent = nullptr);
  ~ProgramView() override;

  /// Reads the script at `path` into the editor (the last run's results are cleared). False
  /// with *error ("'x.py': the file cannot be read") when it cannot be read.
  bool openScript(const QString& path, QString* error = nullptr);
  /// Writes the editor's text to the script's file (asks for a name when it has none).
  bool save(QString* error = nullptr);
  /// Shows a report written earlier (File > Open): its script is opened when it still exists.
  void showReport(std::shared_ptr<const PythonReport> report, const QString& reportName);
  QString scriptPath() const { return path_; }

  /// Saves the script and runs it; nothing while a run is in progress.
  void run();
  /// Kills the running script; the view keeps the last run's results.
  void cancel();
  /// Saves the script and searches the argument holding {} for the largest value whose
  /// simulated run fits (`range` "LO:HI"; asked for when empty); nothing while a run is in
  /// progress or when the script does not import PyTorch (the status says why).
  void searchLargestBatch(const QString& range = QString());
  /// The interpreter, GPU, capacity and arguments chosen in the view.
  SimulationSettings simulationSettings() const;
  /// Chooses them (an interpreter not in the list is added to it).
  void setSimulationSettings(const SimulationSettings& settings);
  SearchChart* searchChart() const { return searchChart_; }
  QTabWidget* chartTabs() const { return tabs_; }
  bool isRunning() const;

  ProgramEditor* editor() const { return editor_; }
  ProgramTimelineChart* timeline() const { return chart_; }
  PeakTableModel* peakModel() const { return peakModel_; }
  QTreeView* peakTable() const { return peakTable_; }
  PeakFlameBar* flameBar() const { return flame_; }
  QPlainTextEdit* outputPane() const { return output_; }
  std::shared_ptr<const ProgramRun> currentRun() const { return run_; }
  /// The one-line status under the buttons ("Ran in 0.4 s: peak 72 MiB ...").
  QString statusText() const;

 public slots:
  /// Selects script line `line` everywhere (editor, timeline, table, bars); 0 clears.
  void selectLine(int line);
  /// Selects event `e` of the timeline and the line that allocated its block.
  void selectEvent(int e);

 signals:
  /// A run ended (finished, failed or cancelled); `hasReport`: its results are shown.
  void runEnded(bool hasReport);

 private:
  QWidget* buildToolbar();
  QWidget* buildSimulationBar();
  void onSearchFinished(int exitCode, bool cancelled, std::shared_ptr<const SearchResults> results,
                        const QString& problem);
  QWidget* buildRightSide();
  void wireLinks();
  void setRun(std::shared_ptr<const ProgramRun> run);
  void onFinished(int exitCode, bool cancelled, std::shared_ptr<const PythonReport> report,
                  const QString& problem);
  void appendOutput(const QString& text, bool isError);
  void setBusy(bool busy);
  void setStatus(const QString& text);
  QString summary(const ProgramRun& run) const;

  ProgramEditor* editor_ = nullptr;
  ProgramTimelineChart* chart_ = nullptr;
  PeakTableModel* peakModel_ = nullptr;
  QTreeView* peakTable_ = nullptr;
  PeakFlameBar* flame_ = nullptr;
  QPlainTextEdit* output_ = nullptr;
  QLabel* title_ = nullptr;
  QLabel* status_ = nullptr;
  QLabel* detail_ = nullptr;
  QLabel* elapsed_ = nullptr;
  QProgressBar* busy_ = nullptr;
  QPushButton* runButton_ = nullptr;
  QPushButton* cancelButton_ = nullptr;
  QPushButton* searchButton_ = nullptr;
  QComboBox* pythonBox_ = nullptr;
  QComboBox* gpuBox_ = nullptr;
  QLineEdit* capacityEdit_ = nullptr;
  QLineEdit* argumentsEdit_ = nullptr;
  QTabWidget* tabs_ = nullptr;
  SearchChart* searchChart_ = nullptr;
  QTimer* tick_ = nullptr;
  ProgramRunner* runner_ = nullptr;
  std::shared_ptr<const ProgramRun> run_;
  QString path_;
  bool linking_ = false;  ///< a selection is being passed around: no echo
};

}  // namespace matmulviz::ui
