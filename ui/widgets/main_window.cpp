#include "ui/widgets/main_window.h"

#include "core/costmodel/cost_model.h"
#include "ui/charts/chart_export.h"
#include "ui/models/run_history.h"
#include "ui/widgets/budget_view.h"
#include "ui/widgets/compare_controller.h"
#include "ui/widgets/file_loader.h"
#include "ui/widgets/first_start_layout.h"
#include "ui/widgets/gradients_view.h"
#include "ui/widgets/kernel_view.h"
#include "ui/widgets/ladder_view.h"
#include "ui/widgets/memory_view.h"
#include "ui/widgets/multihead_view.h"
#include "ui/widgets/program_view.h"
#include "ui/widgets/run_controller.h"
#include "ui/widgets/scenario_panel.h"
#include "ui/widgets/strategies_view.h"
#include "ui/widgets/window_geometry.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QJsonDocument>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QSplitter>
#include <QStandardPaths>
#include <QStatusBar>
#include <QStyle>
#include <QTabWidget>
#include <QTimer>
#include <QVBoxLayout>

namespace matmulviz::ui {

MainWindow::MainWindow(const QString& historyPath, QWidget* parent)
    : QMainWindow(parent), historyPath_(historyPath) {
  setWindowTitle(tr("matmulviz: how a matmul executes on a GPU and what memory it costs"));
  setObjectName("mainWindow");
  normalFont_ = QApplication::font();
  normalPalette_ = QApplication::palette();
  if (historyPath_.isEmpty()) {
    const QString dir = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
    historyPath_ = dir + "/history.json";
  }
  history_ = new RunHistory(this);
  runner_ = new RunController(this);
  loader_ = new FileLoader(this);
  setAcceptDrops(true);

  panel_ = new ScenarioPanel;
  auto* scroll = new QScrollArea;
  scroll->setWidget(panel_);
  scroll->setWidgetResizable(true);
  // Never narrower than the panel's fields need (a splitter once squeezed it to its labels).
  scroll->setMinimumWidth(panel_->minimumSizeHint().width() +
                          scroll->style()->pixelMetric(QStyle::PM_ScrollBarExtent) + 4);
  auto* dock = new QDockWidget(tr("Scenario"), this);
  dock->setObjectName("scenarioDock");
  dock->setWidget(scroll);
  dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
  addDockWidget(Qt::LeftDockWidgetArea, dock);

  auto* central = new QWidget;
  auto* layout = new QVBoxLayout(central);
  layout->setContentsMargins(0, 0, 0, 0);
  banner_ = new QLabel(central);
  banner_->setObjectName("errorBanner");
  banner_->setWordWrap(true);
  // Wrapped, and never wider than the window: a long word (a path) is clipped, not widening it.
  banner_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  banner_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  banner_->setStyleSheet("background: #fdecea; color: #8a1c14; padding: 6px;");
  banner_->hide();
  layout->addWidget(banner_);
  tabs_ = new QTabWidget(central);
  tabs_->setObjectName("views");
  kernelView_ = new KernelView;
  strategiesView_ = new StrategiesView(history_);
  memoryView_ = new MemoryView;
  gradientsView_ = new GradientsView;
  multiheadView_ = new MultiheadView;
  ladderView_ = new LadderView;
  programView_ = new ProgramView;
  auto* kernelTab = new QSplitter(Qt::Vertical);
  kernelTab->setObjectName("kernelSplitter");
  kernelTab->addWidget(kernelView_);
  kernelTab->addWidget(ladderView_);
  kernelTab->setStretchFactor(0, 5);
  kernelTab->setStretchFactor(1, 1);
  tabs_->addTab(kernelTab, tr("&Kernel"));
  tabs_->addTab(strategiesView_, tr("&Strategies"));
  tabs_->addTab(memoryView_, tr("&Memory"));
  tabs_->addTab(gradientsView_, tr("&Gradients"));
  tabs_->addTab(multiheadView_, tr("M&ulti-head"));
  budgetView_ = new BudgetView;
  tabs_->addTab(budgetView_, tr("&Budget"));
  tabs_->addTab(programView_, tr("&Program"));
  layout->addWidget(tabs_, 1);
  setCentralWidget(central);

  compare_ = new CompareController(history_, this);
  connect(strategiesView_, &StrategiesView::compareRequested, compare_,
          &CompareController::compareRuns);
  buildStatusBar();
  buildMenus();
  wireRunner();
  wireFileLoader();
  connect(panel_, &ScenarioPanel::kernelChanged, this, [this] {
    const Scenario s = panel_->scenario();
    kernelView_->setLaunch({s.kernel, s.kernelM, s.kernelK, s.kernelN, s.tpb, 0});
  });
  connect(kernelView_, &KernelView::launchFailed, this, &MainWindow::showError);
  connect(ladderView_, &LadderView::runRequested, this, [this] {
    const KernelLaunchSpec& k = kernelView_->launch();
    ladderView_->run(k.m, k.k, k.n, k.tpb);
  });
  connect(multiheadView_, &MultiheadView::failed, this, &MainWindow::showError);
  connect(multiheadView_, &MultiheadView::reportReady, gradientsView_,
          &GradientsView::setMultiheadReport);
  connect(kernelView_, &KernelView::launchReady, this, [this] {
    const KernelLaunchSpec& k = kernelView_->launch();  // the view's own fields may have changed it
    panel_->setKernelLaunch(k.kernel, k.m, k.k, k.n, k.tpb);
  });
  restoreSession();
}

MainWindow::~MainWindow() = default;

void MainWindow::buildStatusBar() {
  statusText_ = new QLabel(tr("Ready"));
  statusText_->setObjectName("statusText");
  // One line that may be cut at the window's edge (errors also show, wrapped, above the
  // views): a long message must not widen the window.
  statusText_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  progress_ = new QProgressBar;
  progress_->setRange(0, 1000);
  progress_->setMaximumWidth(260);
  progress_->hide();
  cancel_ = new QPushButton(tr("Cancel"));
  cancel_->setToolTip(tr("Stop the run before its next strategy (Esc)"));
  cancel_->hide();
  statusBar()->addWidget(statusText_, 1);
  statusBar()->addPermanentWidget(progress_);
  statusBar()->addPermanentWidget(cancel_);
  connect(cancel_, &QPushButton::clicked, this, &MainWindow::cancelRun);
}

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open…"), QKeySequence::Open, this, &MainWindow::openFileDialog);
  recentMenu_ = file->addMenu(tr("Open &Recent"));
  recentMenu_->setObjectName("recentFilesMenu");
  rebuildRecentMenu();
  compare_->addMenuActions(file);
  file->addAction(tr("&Export all charts…"), QKeySequence(tr("Ctrl+E")), this,
                  &MainWindow::exportAll);
  file->addSeparator();
  file->addAction(tr("Clear run &history"), this, [this] {
    history_->clear();
    saveHistory();
  });
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

  QMenu* run = menuBar()->addMenu(tr("&Run"));
  run->addAction(tr("&Run (the strategies, or the Program view's script)"),
                 QKeySequence(tr("Ctrl+R")), this, &MainWindow::runStrategies);
  run->addAction(tr("&Cancel run"), QKeySequence(Qt::Key_Escape), this, &MainWindow::cancelRun);
  run->addSeparator();
  auto* play = run->addAction(tr("&Play / pause animation"), kernelView_, &KernelView::togglePlay);
  play->setShortcut(Qt::Key_Space);
  auto* step = run->addAction(tr("&Step forward"), kernelView_, &KernelView::stepForward);
  step->setShortcut(Qt::Key_Right);
  auto* back = run->addAction(tr("Step &backward"), kernelView_, &KernelView::stepBackward);
  back->setShortcut(Qt::Key_Left);
  for (QAction* a : {play, step, back}) a->setShortcutContext(Qt::WindowShortcut);

  QMenu* view = menuBar()->addMenu(tr("&View"));
  const QStringList names{tr("Kernel"),     tr("Strategies"), tr("Memory"), tr("Gradients"),
                          tr("Multi-head"), tr("Budget"),     tr("Program")};
  for (int i = 0; i < names.size(); ++i)
    view->addAction(names[i], QKeySequence(QString("Ctrl+%1").arg(i + 1)), this,
                    [this, i] { showView(View(i)); });
  view->addSeparator();
  classroomAction_ = view->addAction(tr("&Classroom mode"), this, &MainWindow::setClassroomMode);
  classroomAction_->setCheckable(true);
  classroomAction_->setShortcut(QKeySequence(tr("Ctrl+Shift+P")));
  view->addAction(tr("&Full screen"), QKeySequence(Qt::Key_F11), this,
                  [this] { isFullScreen() ? showNormal() : showFullScreen(); });
  buildLessonsMenu(view);

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&About matmulviz"), this, [this] {
    QMessageBox::about(this, tr("About matmulviz"),
                       tr("<b>matmulviz 0.1.0</b><p>How a matrix multiplication executes on a "
                          "GPU and what memory it costs.</p><p>GPL-3.0-or-later.</p>"));
  });
}

void MainWindow::wireRunner() {
  connect(panel_, &ScenarioPanel::runRequested, this, &MainWindow::runStrategies);
  connect(panel_, &ScenarioPanel::backToScenarioRequested, this,
          [this] { showView(View::Strategies); });
  connect(panel_, &ScenarioPanel::cancelRequested, this, &MainWindow::cancelRun);
  connect(runner_, &RunController::started, this, [this](const QString& title) {
    statusText_->setText(tr("Running %1…").arg(title));
    progress_->setValue(0);
    progress_->setRange(0, 0);  // busy until the first repeat reports
    progress_->show();
    cancel_->show();
    panel_->setRunning(true);
  });
  connect(runner_, &RunController::progress, this, [this](const QString& text, double f) {
    statusText_->setText(text);
    if (f >= 0) {
      progress_->setRange(0, 1000);
      progress_->setValue(int(f * 1000));
    }
  });
  connect(runner_, &RunController::finished, this, &MainWindow::onFinished);
  connect(runner_, &RunController::failed, this, &MainWindow::onFailed);
  connect(runner_, &RunController::cancelled, this,
          [this](std::shared_ptr<const StrategiesReport>, const Scenario& scenario) {
            onFailed(tr("Cancelled by the user."), scenario);
            statusText_->setText(tr("%1 cancelled").arg(scenario.label()));
          });
}

void MainWindow::runStrategies() {
  if (tabs_->currentWidget() == programView_) {
    programView_->run();
    return;
  }
  if (runner_->isRunning() || !panel_->isValid()) return;
  panel_->clearOpenedFile();  // the run replaces the opened file in the views
  banner_->hide();
  runner_->start(panel_->scenario());
}

void MainWindow::cancelRun() {
  if (tabs_->currentWidget() == programView_ && programView_->isRunning()) {
    programView_->cancel();
    return;
  }
  if (!runner_->isRunning()) return;
  statusText_->setText(tr("Cancelling after the current strategy…"));
  runner_->cancel();
}

void MainWindow::onFinished(std::shared_ptr<const StrategiesReport> report,
                            const Scenario& scenario, double wallSeconds) {
  progress_->hide();
  cancel_->hide();
  panel_->setRunning(false);
  lastReport_ = report;
  history_->append(runEntryFromReport(*report, scenario.label(), &gpuProfile_));
  compare_->remember(history_->entries().back().id, report);
  strategiesView_->setReport(report);
  memoryView_->setReport(report);
  bool gradients = false;
  for (const auto& r : report->runs)
    gradients = gradients || r.backward.dA.defined() || r.backward.dC.defined();
  if (gradients) gradientsView_->setReport(report);  // the last run with backward stays
  saveHistory();
  QStringList failures;
  for (const auto& r : report->runs)
    if (!r.ok) failures << QString::fromStdString(r.strategy + ": " + r.error);
  if (!failures.isEmpty()) showError(failures.join("\n"));
  statusText_->setText(tr("%1 finished in %2 s").arg(scenario.label()).arg(wallSeconds, 0, 'f', 1));
  if (tabs_->currentIndex() == int(View::Kernel)) showView(View::Strategies);
}

void MainWindow::onFailed(const QString& message, const Scenario& scenario) {
  progress_->hide();
  cancel_->hide();
  panel_->setRunning(false);
  RunEntry entry;
  entry.title = scenario.label();
  entry.requiresGrad = scenario.requiresGradText();
  entry.device = QString::fromStdString(std::string(deviceKindName(scenario.config.device)));
  entry.dtype = QString::fromStdString(std::string(dtypeName(scenario.config.workload.dtype)));
  entry.workload = scenario.toJson().value("workload").toObject();
  entry.finishedAt = QDateTime::currentDateTime();
  entry.ok = false;
  entry.error = message;
  history_->append(entry);
  saveHistory();
  showError(message);
  statusText_->setText(tr("%1 failed").arg(scenario.label()));
}

void MainWindow::showError(const QString& message) {
  banner_->setText(message);
  banner_->show();
}

QString MainWindow::lastError() const {
  return banner_->isHidden() ? QString() : banner_->text();
}

void MainWindow::showView(View v) {
  tabs_->setCurrentIndex(int(v));
}

void MainWindow::exportAll() {
  if (!lastReport_) {
    showError(tr("Run the strategies first: there is nothing to export yet."));
    return;
  }
  const QString dir = QFileDialog::getExistingDirectory(this, tr("Export all charts to"));
  if (dir.isEmpty()) return;
  QString error;
  const QStringList files = exportStrategyCharts(*history_, *lastReport_, dir,
                                                 {"png", "svg", "pdf", "csv", "json"}, &error);
  if (!error.isEmpty())
    showError(error);
  else
    statusText_->setText(tr("Wrote %1 files to %2").arg(files.size()).arg(dir));
}

void MainWindow::closeEvent(QCloseEvent* event) {
  loader_->cancel();
  if (runner_->isRunning()) {
    runner_->cancel();
    statusText_->setText(tr("Waiting for the current strategy to end…"));
    runner_->wait(-1);
  }
  saveSession();
  saveHistory();
  event->accept();
}

void MainWindow::saveHistory() {
  QDir().mkpath(QFileInfo(historyPath_).absolutePath());
  QString error;
  if (!history_->save(historyPath_, &error)) statusText_->setText(error);
}

void MainWindow::saveSession() {
  QSettings settings;
  settings.setValue("window/geometry", saveGeometry());
  settings.setValue("window/state", saveState());
  settings.setValue("window/view", tabs_->currentIndex());
  // A lesson's scenario is temporary: the user's own is what the next start shows.
  const Scenario own = beforeLesson_ ? *beforeLesson_ : panel_->scenario();
  settings.setValue("scenario", QString::fromUtf8(QJsonDocument(own.toJson()).toJson()));
}

void MainWindow::restoreSession() {
  QSettings settings;
  if (!restoreGeometryOnScreen(this, settings.value("window/geometry").toByteArray()))
    applyFirstStartGeometry(*this);
  if (!restoreState(settings.value("window/state").toByteArray())) {
    // A fresh settings folder: once shown, the Scenario dock gets its panel's natural width.
    QTimer::singleShot(0, this, [this] {
      if (auto* dock = findChild<QDockWidget*>("scenarioDock"))
        giveDockItsNaturalWidth(*this, *dock, *panel_);
    });
  }
  tabs_->setCurrentIndex(settings.value("window/view", 0).toInt());
  const QByteArray saved = settings.value("scenario").toString().toUtf8();
  if (!saved.isEmpty()) {
    try {
      panel_->setScenario(Scenario::fromJson(QJsonDocument::fromJson(saved).object()));
    } catch (const std::exception& e) {
      statusText_->setText(tr("The saved scenario was not restored: %1").arg(e.what()));
    }
  } else {
    emit panel_->kernelChanged();
  }
  QString error;
  if (QFileInfo::exists(historyPath_) && !history_->load(historyPath_, &error))
    showError(tr("The run history was not restored: %1").arg(error));
}

}  // namespace matmulviz::ui
