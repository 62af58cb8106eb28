#pragma once
// Runs a Python script through the matmulviz module in a separate process, as
// `python3 -m matmulviz SCRIPT --report FILE` (Debian's /usr/bin/python3, PYTHONPATH pointing at
// the module this build made), streams its stdout and stderr, and reads the report it wrote on
// a worker thread. Cancel kills the process; nothing of it is kept. A script that fails still
// writes the report of what ran (marked incomplete), which is read as well.

#include "core/report/python_report.h"

#include <QElapsedTimer>
#include <QObject>
#include <QProcess>

#include <memory>

class QTemporaryDir;

namespace matmulviz::ui {

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
  /// The GPU a PyTorch script's simulation takes (matmulviz.simulate --gpu).
  static QString simulatedGpu() { return QStringLiteral("h200"); }
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

 private:
  void onProcessFinished(int exitCode, QProcess::ExitStatus status);
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
  bool cancelled_ = false;
  bool moduleMissing_ = false;  ///< Python said "No module named matmulviz"
  QString stderrTail_;          ///< the end of stderr so far, for a message split across reads
};

}  // namespace matmulviz::ui
