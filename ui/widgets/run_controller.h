#pragma once
// Runs a Scenario's strategies on a worker thread, so the window never freezes: progress as
// text and a fraction, Cancel between strategy runs (StrategyRunner's cancel flag), and the
// report or the error handed back on the GUI thread.

#include "core/report/strategies_report.h"
#include "core/strategies/runner.h"
#include "ui/models/scenario.h"

#include <QObject>
#include <QString>

#include <atomic>
#include <memory>

class QThread;

namespace matmulviz::ui {

class RunController : public QObject {
  Q_OBJECT
 public:
  explicit RunController(QObject* parent = nullptr);
  ~RunController() override;  ///< cancels and waits for a run in flight

  bool isRunning() const { return thread_ != nullptr; }
  /// Starts `scenario` (timeline recorded, outputs and gradients kept for the views). Returns
  /// false, doing nothing, when a run is already in flight.
  bool start(const Scenario& scenario);
  /// Asks the run in flight to stop before its next strategy; `cancelled` follows.
  void cancel();
  /// Waits (at most `ms`) for the run in flight to end; for tests and shutdown.
  bool wait(int ms);

  /// The progress bar's fraction in [0, 1] at `p`: each strategy an equal share, each of its
  /// repeats an equal part of that, its backward the second half of the last repeat's part;
  /// 1 at Finished. -1 (the bar keeps its value) for the steps before the first repeat.
  /// Nondecreasing over the order the runner reports in.
  static double fractionOf(const RunProgress& p);

 signals:
  void started(const QString& title);
  /// `fraction` in [0, 1]: strategies and repeats done over all of them.
  void progress(const QString& message, double fraction);
  void finished(std::shared_ptr<const matmulviz::StrategiesReport> report,
                const matmulviz::ui::Scenario& scenario, double wallSeconds);
  /// Bad input, out of host memory, or an exception from the engine: the message says which.
  void failed(const QString& message, const matmulviz::ui::Scenario& scenario);
  /// Cancelled: the strategies that ended before the cancel are in `partial`.
  void cancelled(std::shared_ptr<const matmulviz::StrategiesReport> partial,
                 const matmulviz::ui::Scenario& scenario);

 private:
  void work(const Scenario& scenario);

  QThread* thread_ = nullptr;
  std::atomic<bool> cancel_{false};
};

}  // namespace matmulviz::ui

Q_DECLARE_METATYPE(std::shared_ptr<const matmulviz::StrategiesReport>)
