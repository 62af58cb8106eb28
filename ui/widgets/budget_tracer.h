#pragma once
// Traces a script's function into a joint graph for the Budget view, in a separate process:
// Debian's /usr/bin/python3 runs `-m matmulviz._budget SCRIPT --function F --graph-out FILE
// --no-sweep` (what `matmulviz-cli budget ... --no-sweep` runs) with the Python package this
// build made on PYTHONPATH, and the graph file it writes is read with the strict reader
// (core/partitioner/graph_json.h). A script that hangs or crashes never takes the app with it,
// and Cancel kills it.

#include "core/partitioner/joint_graph.h"

#include <QObject>
#include <QString>
#include <QStringList>

#include <memory>

class QProcess;
class QTemporaryDir;

namespace matmulviz::ui {

class BudgetTracer : public QObject {
  Q_OBJECT
 public:
  explicit BudgetTracer(QObject* parent = nullptr);
  ~BudgetTracer() override;  ///< kills a trace in flight

  /// Starts tracing `function` of `script` (a path). A trace in flight is cancelled first.
  /// Emits finished() or failed(), or cancelled() after cancel().
  void trace(const QString& script, const QString& function);
  /// Kills the trace in flight (if any) and emits cancelled().
  void cancel();
  bool isRunning() const;
  /// "f of model.py": the function and script of the last trace, for messages.
  QString target() const;

  /// The folder holding the `matmulviz` package: $MATMULVIZ_PYTHONPATH, else this build's
  /// python folder when it holds the package, else empty (python3 looks for it on its own path).
  static QString pythonPackagePath();
  /// The repository's examples/budget_*.py ($MATMULVIZ_EXAMPLES_DIR, else the source tree's
  /// examples folder), sorted; empty when none is found.
  static QStringList exampleScripts();

 signals:
  void finished(std::shared_ptr<const matmulviz::partitioner::JointGraph> graph,
                const QString& title);
  /// `message`: what went wrong in words (the tracer's own message for an unsupported op with
  /// its script line, a function that is not differentiable or not scalar; the end of the
  /// traceback when the script raised; a graph file the reader refused).
  void failed(const QString& message);
  void cancelled();

 private:
  void onFinished(int exitCode, bool crashed);
  QString errorText(int exitCode) const;

  QProcess* process_ = nullptr;
  std::unique_ptr<QTemporaryDir> dir_;
  QString script_, function_;
};

}  // namespace matmulviz::ui
