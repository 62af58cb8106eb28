#include "app/gui/screenshot_tour.h"

#include "ui/models/budget_explorer.h"
#include "ui/models/run_history.h"
#include "ui/widgets/budget_tracer.h"
#include "ui/widgets/budget_view.h"
#include "ui/widgets/gradients_view.h"
#include "ui/widgets/kernel_view.h"
#include "ui/widgets/ladder_view.h"
#include "ui/widgets/main_window.h"
#include "ui/widgets/multihead_view.h"
#include "ui/widgets/run_controller.h"
#include "ui/widgets/scenario_panel.h"

#include <QCoreApplication>
#include <QDir>
#include <QPixmap>

#include <cstdio>

namespace matmulviz::app {

using ui::MainWindow;

ScreenshotTour::ScreenshotTour(MainWindow& window, QString dir, bool programOnly, QObject* parent)
    : QObject(parent), window_(window), dir_(std::move(dir)), programOnly_(programOnly) {
  timer_.setInterval(100);
  connect(&timer_, &QTimer::timeout, this, &ScreenshotTour::poll);
  if (!programOnly_) buildSteps();
  addProgramSteps();
}

void ScreenshotTour::start() {
  QDir().mkpath(dir_);
  current_ = 0;
  next();
}

void ScreenshotTour::runPreset(const QString& preset, bool meta) {
  ui::ScenarioPanel* panel = window_.scenarioPanel();
  panel->selectPreset(preset);
  ui::Scenario s = panel->scenario();
  s.config.repeats = 1;
  if (meta) s.config.device = DeviceKind::Meta;
  panel->setScenario(s);
  window_.runStrategies();
}

void ScreenshotTour::buildSteps() {
  ui::KernelView* kv = window_.kernelView();
  auto kernelReady = [kv] { return !kv->isSimulating() && kv->stepCount() > 0; };
  auto launch = [this, kv](ui::KernelLaunchSpec spec) {
    window_.showView(MainWindow::View::Kernel);
    kv->setLaunch(spec);
  };
  auto runEnded = [this] { return !window_.runController()->isRunning(); };
  steps_ = {
      {"speed ladder: the lesson's 50000x784x10",
       [this] { window_.ladderView()->run(50000, 784, 10, 16); },
       [this] { return !window_.ladderView()->isRunning(); }, 120000},
      {"kernel: the lesson's 5x784x10 launch, TPB 16",
       [=] {
         launch({"naive", 5, 784, 10, 16, 0});
       },
       kernelReady},
      {"kernel: follow thread (3,7)", [=] { kv->selectCell(3, 7); },
       [=] { return kernelReady() && kv->narration().contains("(3"); }},
      {"kernel: mid k-loop", [=] { kv->seek(kv->currentStep() + 12); }, kernelReady},
      {"shot", [this] { shoot("kernel-naive.png"); }, [] { return true; }},
      {"kernel: smem_tiled 40x37x33, TPB 8",
       [=] {
         launch({"smem_tiled", 40, 37, 33, 8, 0});
       },
       kernelReady},
      {"kernel: smem_tiled mid launch", [=] { kv->seek(kv->stepCount() / 3); }, kernelReady},
      {"shot", [this] { shoot("kernel-smem_tiled.png"); }, [] { return true; }},
      {"kernel: smem_tiled_no_sync 40x37x33, TPB 8 (faulty on purpose: a race)",
       [=] {
         launch({"smem_tiled_no_sync", 40, 37, 33, 8, 0});
       },
       kernelReady},
      {"kernel: smem_tiled_no_sync mid launch", [=] { kv->seek(kv->stepCount() / 3); },
       kernelReady},
      {"shot", [this] { shoot("kernel-smem_tiled_no_sync.png"); }, [] { return true; }},
      {"run: small, a and c require grad, with backward", [this] { runPreset("small", false); },
       runEnded, 120000},
      {"run: seed000 on cpu (about a minute)", [this] { runPreset("seed000", false); }, runEnded,
       300000},
      {"run: seed000-grad on cpu (about a minute)", [this] { runPreset("seed000-grad", false); },
       runEnded, 300000},
      {"strategies", [this] { window_.showView(MainWindow::View::Strategies); },
       [] { return true; }},
      {"shot", [this] { shoot("strategies.png"); }, [] { return true; }},
      {"memory", [this] { window_.showView(MainWindow::View::Memory); }, [] { return true; }},
      {"shot", [this] { shoot("memory.png"); }, [] { return true; }},
      {"gradients", [this] { window_.showView(MainWindow::View::Gradients); }, [] { return true; }},
      {"shot", [this] { shoot("gradients.png"); }, [] { return true; }},
      {"multi-head: b 2, s 8, h 16, e 4, 4 heads, top_p 0.1, top_k 3",
       [this] {
         window_.showView(MainWindow::View::Multihead);
         MultiheadConfig c;
         c.topP = 0.1;
         c.topK = 3;
         c.backward = true;
         window_.multiheadView()->setConfig(c);
       },
       [this] { return !window_.multiheadView()->isRunning(); }},
      {"shot", [this] { shoot("multihead.png"); }, [] { return true; }},
      {"gradients of the multi-head run",
       [this] {
         window_.showView(MainWindow::View::Gradients);
         window_.gradientsView()->select("dA1", QString());
       },
       [] { return true; }},
      {"shot", [this] { shoot("gradients-multihead.png"); }, [] { return true; }},
      {"budget: the mm + cos chain at budget 0.30",
       [this] {
         window_.showView(MainWindow::View::Budget);
         window_.budgetView()->selectExample("mm-cos-chain");
         window_.budgetView()->setBudget(0.3);
       },
       [] { return true; }},
      {"shot", [this] { shoot("budget.png"); }, [] { return true; }},
      {"budget: the slider moved to 0.60", [this] { window_.budgetView()->setBudget(0.6); },
       [] { return true; }},
      {"shot", [this] { shoot("budget-moved.png"); }, [] { return true; }},
      {"budget: the transformer-like graph at 0.50",
       [this] {
         window_.budgetView()->selectExample("transformer-2");
         window_.budgetView()->setBudget(0.5);
       },
       [] { return true; }},
      {"shot", [this] { shoot("budget-transformer.png"); }, [] { return true; }},
      {"budget: examples/budget_chain.py traced by the view",
       [this] {
         for (const QString& script : ui::BudgetTracer::exampleScripts())
           if (script.endsWith("/budget_chain.py"))
             window_.budgetView()->traceFunction(script, "f");
       },
       [this] {
         const ui::BudgetView* v = window_.budgetView();
         return !v->tracer()->isRunning() && v->explorer()->title() == "budget_chain.py: f";
       },
       60000},
      {"budget: the traced chain at 0.30", [this] { window_.budgetView()->setBudget(0.3); },
       [] { return true; }},
      {"shot", [this] { shoot("budget-traced.png"); }, [] { return true; }},
      {"budget: the traced chain's slider moved to 0.70",
       [this] { window_.budgetView()->setBudget(0.7); }, [] { return true; }},
      {"shot", [this] { shoot("budget-traced-moved.png"); }, [] { return true; }},
      {"classroom mode",
       [this] {
         window_.setClassroomMode(true);
         window_.showView(MainWindow::View::Kernel);
       },
       [] { return true; }},
      {"shot", [this] { shoot("classroom-kernel.png"); }, [] { return true; }},
  };
}

void ScreenshotTour::next() {
  if (current_ >= steps_.size()) {
    std::printf("screenshots: done, PNGs in %s\n", qPrintable(dir_));
    window_.close();
    QCoreApplication::exit(0);
    return;
  }
  const Step& s = steps_[current_];
  std::printf("screenshots: %s\n", qPrintable(s.name));
  std::fflush(stdout);
  waitedMs_ = 0;
  s.action();
  timer_.start();
}

void ScreenshotTour::poll() {
  const Step& s = steps_[current_];
  waitedMs_ += timer_.interval();
  // Give the window a few frames to repaint after the step's work ended.
  if (s.done() && waitedMs_ >= 300) {
    timer_.stop();
    ++current_;
    next();
  } else if (waitedMs_ > s.timeoutMs) {
    timer_.stop();
    std::fprintf(stderr, "screenshots: '%s' did not finish in %d s (%s)\n", qPrintable(s.name),
                 s.timeoutMs / 1000, qPrintable(window_.lastError()));
    QCoreApplication::exit(1);
  }
}

void ScreenshotTour::shoot(const QString& file) {
  const QString path = QDir(dir_).filePath(file);
  if (!window_.grab().save(path)) {
    std::fprintf(stderr, "screenshots: could not write %s\n", qPrintable(path));
    QCoreApplication::exit(1);
    return;
  }
  std::printf("screenshots: wrote %s\n", qPrintable(path));
}

}  // namespace matmulviz::app
