#pragma once
// Runs a Python script through the matmulviz module in a separate process, as
// `python3 -m matmulviz SCRIPT --report FILE` (Debian's /usr/bin/python3, PYTHONPATH pointing at
// the module this build made), streams its stdout and stderr, and reads the report it wrote on
// a worker thread. Cancel kills the process; nothing of it is kept. A script that fails still
// writes the report of what ran (marked incomplete), which is read as well. A script that
// imports PyTorch runs under `matmulviz.simulate` with the interpreter, GPU, capacity and
// arguments of its SimulationSettings; startSearch() runs that simulation's largest-batch search.

#include "core/report/python_report.h"
#include "core/report/search_results.h"

#include <QElapsedTimer>
#include <QObject>
#include <QProcess>

#include <memory>

class QTemporaryDir;

namespace matmulviz::ui {

/// How a script that imports PyTorch is simulated (`python3 -m matmulviz.simulate`'s options).
struct SimulationSettings {
  QString python = QStringLiteral("/usr/bin/python3");  ///< the interpreter: its PyTorch
  QString gpu = QStringLiteral("h200");                 ///< --gpu
  QString capacity;                                     ///< --capacity ("" : the GPU's)
  QString arguments;  ///< the script's own arguments, split as a shell would (no expansions)
};

/// An interpreter a PyTorch script can run with: what the view's list shows, and its path.
struct PythonChoice {
  QString label, path;
};

class ProgramRunner : public QObject {
  Q_OBJECT
 public:
  explicit ProgramRunner(QObject* parent = nullptr);
  ~ProgramRunner() override;  ///< kills a script still running

  /// The folder holding the `matmulviz` package: $MATMULVIZ_PYTHONPATH, else this build's
  /// (when it holds the module), else "" (an installed package, on python3's own path).
  static QString packagePath();
  static QString python() { return QStringLiteral("/usr/bin/python3"); }

  /// Whether the script at `scriptPath` imports PyTorch itself (a line `import torch...` or
  /// `from torch...`; `import matmulviz.torch as torch` is matmulviz's own API).
  static bool usesPyTorch(const QString& scriptPath);
  /// The GPUs matmulviz.simulate --gpu knows (python/matmulviz/simulate/_gpus.py), default first.
  static QStringList simulatedGpus();
  /// Debian's python3 (its PyTorch 1.13), then each PyTorch environment scripts/setup made
  /// (~/.cache/matmulviz/venvs/VERSION, or $MATMULVIZ_VENVS), newest first.
  static QList<PythonChoice> pythonChoices();
  void setSimulation(const SimulationSettings& settings) { settings_ = settings; }
  const SimulationSettings& simulation() const { return settings_; }
  /// The arguments start() runs `scriptPath` with, `*program` the interpreter; `output`: the
  /// path given to `outputOption` (--report; a search's --stats).
  QStringList commandLine(const QString& scriptPath, const QString& output, QString* program,
                          const QString& outputOption = QStringLiteral("--report")) const;
  /// Runs the largest-batch search of a PyTorch script: `--search range` ("LO:HI") over the
  /// "{}" in the settings' arguments, two trials at a time; searchFinished() follows.
  void startSearch(const QString& scriptPath, const QString& range);
  /// Starts `scriptPath` (in its own folder); ignored while a run is in progress. A script
  /// that imports PyTorch runs unchanged under `python3 -m matmulviz.simulate` on the
  /// simulated GPU (its CUDA tensors without values, in the caching-allocator model); others
  /// under `python3 -m matmulviz` (matmulviz.torch). Both write the report the view reads.
  void start(const QString& scriptPath);
  /// Kills the running script; finished() follows with cancelled = true.
  void cancel();
  /// From start() until finished() (the report is read in between).
  bool isRunning() const { return running_; }
  qint64 elapsedMs() const { return clock_.isValid() ? clock_.elapsed() : 0; }

 signals:
  void output(const QString& text, bool isError);
  /// The run is over. `report`: what it wrote, or null (cancelled, Python missing, or a
  /// report that could not be read: `problem` says which, in plain words).
  void finished(int exitCode, bool cancelled, std::shared_ptr<const matmulviz::PythonReport> report,
                const QString& problem);
  /// A search is over: its results (null when cancelled or unreadable: `problem` says why).
  void searchFinished(int exitCode, bool cancelled,
                      std::shared_ptr<const matmulviz::SearchResults> results,
                      const QString& problem);

 private:
  void launch(const QString& program, const QStringList& args, const QString& workingDir);
  void onProcessFinished(int exitCode, QProcess::ExitStatus status);
  void endSearch(int exitCode, bool cancelled, const QString& problem);
  void readReport(int exitCode);
  /// Notes, from the script's stderr, whether Python found no `matmulviz` module.
  void noteErrorText(const QString& text);
  void end(int exitCode, bool cancelled, std::shared_ptr<const PythonReport> report,
           const QString& problem);

  QProcess* process_ = nullptr;
  std::unique_ptr<QTemporaryDir> dir_;
  QString reportPath_;
  QElapsedTimer clock_;
  bool running_ = false;
  bool searching_ = false;  ///< the run is a search: its results, not a report
  SimulationSettings settings_;
  bool cancelled_ = false;
  bool moduleMissing_ = false;  ///< Python said "No module named matmulviz"
  QString stderrTail_;          ///< the end of stderr so far, for a message split across reads
};

}  // namespace matmulviz::ui
