#include "ui/widgets/run_controller.h"

#include "core/memory/host_backing.h"
#include "core/strategies/prepare_run.h"
#include "kernels/cuda/cuda_device.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QElapsedTimer>
#include <QMetaObject>
#include <QThread>

#include <exception>
#include <new>

namespace matmulviz::ui {

RunController::RunController(QObject* parent) : QObject(parent) {
  qRegisterMetaType<std::shared_ptr<const StrategiesReport>>();
  qRegisterMetaType<Scenario>();
}

RunController::~RunController() {
  cancel();
  wait(-1);
}

bool RunController::start(const Scenario& scenario) {
  if (thread_) return false;
  cancel_ = false;
  thread_ = QThread::create([this, scenario] { work(scenario); });
  connect(thread_, &QThread::finished, this, [this] {
    thread_->deleteLater();
    thread_ = nullptr;
  });
  emit started(scenario.label());
  thread_->start();
  return true;
}

void RunController::cancel() {
  cancel_ = true;
}

bool RunController::wait(int ms) {
  if (!thread_) return true;
  const bool done = ms < 0 ? thread_->wait() : thread_->wait(QDeadlineTimer(ms));
  if (done) QCoreApplication::sendPostedEvents(this);  // deliver finished() and the cleanup
  return done;
}

double RunController::fractionOf(const RunProgress& p) {
  using P = RunProgress::Phase;
  if (p.phase == P::Finished) return 1;
  if ((p.phase != P::Forward && p.phase != P::Backward) || p.strategyCount < 1 || p.repeatCount < 1)
    return -1;
  // Each strategy is an equal share; in it, each repeat is, and its backward takes the second
  // half of the last repeat's.
  const double repeatsDone = p.phase == P::Forward ? p.repeat - 1 : p.repeatCount - 0.5;
  return (p.strategyIndex + repeatsDone / p.repeatCount) / p.strategyCount;
}

namespace {

/// A refusal in the scenario panel's words: its field label ("N", "dtype", "device memory"),
/// or the reason alone when no field of the panel sets it (the host memory a workload needs).
QString panelMessage(const BadInput& e) {
  const QString reason = QString::fromStdString(e.reason());
  if (e.field() == "host memory") return reason;
  const QString field = QString::fromStdString(e.field());
  return (field.size() == 1 ? field.toUpper() : field) + QStringLiteral(": ") + reason;
}

/// Appends the panel's remedy to each skipped backward's message: the app has no force, so a
/// backward over the time limit runs once the sizes are smaller.
void addPanelRemedies(StrategiesReport& report, double limitSeconds) {
  using R = BackwardOutcome::Reason;
  for (StrategyRun& r : report.runs) {
    std::string& message = r.backward.message;
    if (r.backward.reason == R::NothingRequiresGrad) {
      message += QCoreApplication::translate("RunController", ": tick a or c under requires_grad")
                     .toStdString();
    } else if (r.backward.reason == R::OverTimeLimit) {
      message += QCoreApplication::translate(
                     "RunController",
                     "; the app runs a backward estimated under %1 s only: make N or M smaller "
                     "to run it here")
                     .arg(limitSeconds)
                     .toStdString();
    }
  }
}

QString outOfHostMemoryMessage() {
  return QCoreApplication::translate(
      "RunController",
      "Out of host memory: this machine could not give the run the memory it asked for. Try "
      "smaller sizes, fewer strategies, or the meta device (memory only, no data).");
}

}  // namespace

void RunController::work(const Scenario& scenario) {
  QElapsedTimer clock;
  clock.start();
  auto post = [this](auto fn) { QMetaObject::invokeMethod(this, fn, Qt::QueuedConnection); };
  auto fail = [&](const QString& message) {
    post([this, message, scenario] { emit failed(message, scenario); });
  };
  try {
    RunConfig config = scenario.config;
    config.recordTimeline = true;
    config.keepOutputs = true;
    kernels::cuda::useCudaDeviceIfAsked(config);           // its run fails saying why without a GPU
    PreparedRun prepared = prepareRun(std::move(config));  // refuses before any allocation
    const bool withData = prepared.config.device != DeviceKind::Meta;
    StrategyRunner runner(std::move(prepared.config), std::move(prepared.inputs));
    ProgressFn progressFn = [&](const RunProgress& p) {
      const double f = fractionOf(p);
      const QString text = QString::fromStdString(describe(p));
      post([this, text, f] { emit progress(text, f); });
    };
    if (withData) runner.checkFitsInHostMemory(progressFn);
    StrategiesReport result = runner.run(progressFn, &cancel_);
    addPanelRemedies(result, scenario.config.backwardLimitSeconds);
    auto report = std::make_shared<const StrategiesReport>(std::move(result));
    const double wall = double(clock.nsecsElapsed()) * 1e-9;
    if (cancel_)
      post([this, report, scenario] { emit cancelled(report, scenario); });
    else
      post([this, report, scenario, wall] { emit finished(report, scenario, wall); });
  } catch (const BadInput& e) {
    fail(panelMessage(e));
  } catch (const std::bad_alloc&) {
    fail(outOfHostMemoryMessage());
  } catch (const std::exception& e) {
    fail(QString::fromUtf8(e.what()));
  }
  releaseUnusedHostMemory();  // the run's inputs, references and arena pages (not the report)
}

}  // namespace matmulviz::ui
