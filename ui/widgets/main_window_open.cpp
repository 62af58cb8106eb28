// MainWindow: opening files (File > Open, Open Recent, drag and drop, the command line).
#include "core/costmodel/cost_model.h"
#include "ui/models/opened_file_summary.h"
#include "ui/models/program_run.h"
#include "ui/models/run_history.h"
#include "ui/widgets/budget_view.h"
#include "ui/widgets/compare_controller.h"
#include "ui/widgets/file_loader.h"
#include "ui/widgets/main_window.h"
#include "ui/widgets/memory_view.h"
#include "ui/widgets/program_view.h"
#include "ui/widgets/run_controller.h"
#include "ui/widgets/scenario_panel.h"
#include "ui/widgets/strategies_view.h"

#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QSettings>
#include <QTabWidget>

namespace matmulviz::ui {

namespace {

constexpr int kMaxRecentFiles = 8;

/// The local files among `urls`.
QStringList localFiles(const QList<QUrl>& urls) {
  QStringList files;
  for (const QUrl& url : urls)
    if (url.isLocalFile()) files << url.toLocalFile();
  return files;
}

}  // namespace

void MainWindow::wireFileLoader() {
  connect(loader_, &FileLoader::started, this, [this](const QString& name) {
    statusText_->setText(tr("Opening %1…").arg(name));
    if (runner_->isRunning()) return;  // the run's progress keeps the bar
    progress_->setRange(0, 0);         // busy until a snapshot reports a fraction
    progress_->show();
  });
  connect(loader_, &FileLoader::progress, this, [this](double f) {
    if (runner_->isRunning()) return;
    progress_->setRange(0, 1000);
    progress_->setValue(int(f * 1000));
  });
  connect(loader_, &FileLoader::loaded, this, &MainWindow::onFileLoaded);
  connect(loader_, &FileLoader::failed, this, &MainWindow::onOpenFailed);
  connect(loader_, &FileLoader::idle, this, [this] {
    if (!runner_->isRunning()) progress_->hide();
  });
}

void MainWindow::openFileDialog() {
  const QStringList paths = QFileDialog::getOpenFileNames(
      this, tr("Open reports, presets, joint graphs, PyTorch memory snapshots or Python scripts"),
      QString(),
      tr("matmulviz files (*.json *.pickle *.pkl *.gz *.py);;Reports and presets (*.json);;"
         "PyTorch memory snapshots (*.pickle *.pkl *.pickle.gz);;Python scripts (*.py);;"
         "All files (*)"));
  if (!paths.isEmpty()) openFiles(paths);
}

void MainWindow::openFiles(const QStringList& paths) {
  if (!paths.isEmpty()) loader_->open(paths);
}

void MainWindow::onFileLoaded(const OpenedFile& file) {
  QString status;
  switch (file.kind) {
    case FileKind::Report:
      if (file.multihead || file.budget || file.einsum) {
        status = openReportWithoutTimeline(file);
        break;
      }
      if (!file.report) {  // a Python run's report: its timeline, and the run in the Program view
        memoryView_->setTimelines(file.fileName, tr("Script"), file.timelines, file.note);
        if (file.pythonReport) programView_->showReport(file.pythonReport, file.fileName);
        // The Program view when it shows the script the report is of (the report's script is
        // still there, or that script is open in the view); the Memory view otherwise.
        const auto run = programView_->currentRun();
        if (file.pythonReport && run && !run->lines().isEmpty()) {
          status = tr("Opened %1: a Python run, in the Program view").arg(file.fileName);
          showView(View::Program);
        } else {
          status = tr("Opened %1: a Python run, %n events", nullptr, int(file.eventCount))
                       .arg(file.fileName);
          showView(View::Memory);
        }
        break;
      }
      history_->append(runEntryFromReport(*file.report, file.fileName, &gpuProfile_));
      lastReport_ = file.report;
      compare_->remember(history_->entries().back().id, file.report);
      strategiesView_->setReport(file.report);
      memoryView_->setReport(file.report);
      saveHistory();
      status =
          tr("Opened %1: %n strategies", nullptr, int(file.report->runs.size())).arg(file.fileName);
      if (tabs_->currentIndex() == int(View::Kernel)) showView(View::Strategies);
      break;
    case FileKind::BudgetGraph:
      budgetView_->setGraph(file.budgetGraph, file.budgetTitle);
      status = tr("Opened %1: a joint graph of %n nodes", nullptr, int(file.budgetGraph->size()))
                   .arg(file.fileName);
      showView(View::Budget);
      break;
    case FileKind::Snapshot:
      if (file.store)
        memoryView_->setStore(file.fileName, file.store, file.note);
      else
        memoryView_->setTimelines(file.fileName, tr("Device"), file.timelines, file.note);
      memoryView_->setAllocatorHistories(file.allocatorHistories, file.allocatorNote);
      memoryView_->setSnapshotAllocations(file.allocations);  // none for a store
      status = tr("Opened %1: a PyTorch memory snapshot, %n events (allocations, frees and "
                  "segment changes)",
                  nullptr, int(file.eventCount))
                   .arg(file.fileName);
      showView(View::Memory);
      break;
    case FileKind::Preset: {
      QString error;
      if (!panel_->loadPresetFile(file.path, &error)) {
        onOpenFailed(file.path, error);
        return;
      }
      status = tr("Opened the preset %1: Run (Ctrl+R) to run it").arg(file.fileName);
      break;
    }
    case FileKind::Script: {
      QString error;
      if (!programView_->openScript(file.path, &error)) {
        onOpenFailed(file.path, error);
        return;
      }
      status =
          tr("Opened %1 in the Program view: Run (Ctrl+R) to see its memory").arg(file.fileName);
      showView(View::Program);
      break;
    }
    case FileKind::Unknown:
      return;  // loadFile refuses these
  }
  // What the window is now about: the file, in the Scenario panel's place of the fields.
  if (file.kind == FileKind::Snapshot || file.kind == FileKind::Report ||
      file.kind == FileKind::BudgetGraph)
    panel_->showOpenedFile(openedFileSummary(file));
  else if (file.kind == FileKind::Preset)
    panel_->clearOpenedFile();
  if (!file.ignoredKeys.isEmpty())
    status += tr("; skipped keys this version does not know: %1").arg(file.ignoredKeys.join(", "));
  addRecentFile(file.path);
  statusText_->setText(status);
}

void MainWindow::onOpenFailed(const QString& path, const QString& message) {
  statusText_->setText(tr("%1 was not opened").arg(QFileInfo(path).fileName()));
  // Not modal-blocking: the next queued file goes on loading behind it.
  auto* box = new QMessageBox(QMessageBox::Warning, tr("Cannot open the file"), message,
                              QMessageBox::Ok, this);
  box->setObjectName("openErrorBox");
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();
}

QStringList MainWindow::recentFiles() const {
  return QSettings().value("recentFiles").toStringList();
}

void MainWindow::addRecentFile(const QString& path) {
  QStringList files = recentFiles();
  const QString absolute = QFileInfo(path).absoluteFilePath();
  files.removeAll(absolute);
  files.prepend(absolute);
  while (files.size() > kMaxRecentFiles) files.removeLast();
  QSettings().setValue("recentFiles", files);
  rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
  recentMenu_->clear();
  const QStringList files = recentFiles();
  for (int i = 0; i < files.size(); ++i) {
    const QString path = files[i];
    // The name only: a menu is no place for a folder's path.
    recentMenu_->addAction(QStringLiteral("&%1 %2").arg(i + 1).arg(QFileInfo(path).fileName()),
                           this, [this, path] { openFiles({path}); });
  }
  if (!files.isEmpty()) recentMenu_->addSeparator();
  QAction* clear = recentMenu_->addAction(tr("&Clear the list"), this, [this] {
    QSettings().remove("recentFiles");
    rebuildRecentMenu();
  });
  clear->setEnabled(!files.isEmpty());
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (event->mimeData()->hasUrls() && !localFiles(event->mimeData()->urls()).isEmpty())
    event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  const QStringList files = localFiles(event->mimeData()->urls());
  if (files.isEmpty()) return;
  event->acceptProposedAction();
  openFiles(files);
}

}  // namespace matmulviz::ui
