#include "ui/widgets/compare_controller.h"

#include "ui/models/run_history.h"
#include "ui/widgets/compare_window.h"

#include <QAction>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QtConcurrent/QtConcurrentRun>

namespace matmulviz::ui {

namespace {

const QString kFilter =
    QObject::tr("Reports and snapshots (*.json *.pickle *.pkl);;Reports (*.json);;All files (*)");

}  // namespace

CompareController::CompareController(const RunHistory* history, QWidget* window)
    : QObject(window), history_(history), parentWindow_(window) {
  connect(&watcher_, &QFutureWatcher<Loaded>::finished, this, [this] {
    const Loaded r = watcher_.result();
    if (r.files)
      show(r.files);
    else
      fail(r.error);
  });
}

CompareController::~CompareController() {
  watcher_.waitForFinished();
}

CompareWindow* CompareController::compareWindow() const {
  return window_.data();
}

void CompareController::addMenuActions(QMenu* menu) {
  QAction* a = menu->addAction(tr("Co&mpare Reports…"), this, &CompareController::chooseFiles);
  a->setObjectName("compareReportsAction");
  a->setShortcut(QKeySequence(tr("Ctrl+Shift+D")));
  a->setToolTip(tr("Two reports side by side, and their difference"));
}

void CompareController::remember(int runId, std::shared_ptr<const StrategiesReport> report) {
  if (!report) return;
  reports_.emplace_back(runId, std::move(report));
  while (reports_.size() > size_t(kReportsKept)) reports_.pop_front();
}

void CompareController::chooseFiles() {
  QStringList paths = QFileDialog::getOpenFileNames(
      parentWindow_, tr("Compare: choose report A (or A and B)"), QString(), kFilter);
  if (paths.size() == 1) {
    const QString b = QFileDialog::getOpenFileName(parentWindow_, tr("Compare: choose report B"),
                                                   QFileInfo(paths[0]).path(), kFilter);
    if (b.isEmpty()) return;
    paths << b;
  }
  if (paths.isEmpty()) return;
  if (paths.size() != 2) {
    fail(tr("Choose two files to compare, not %1.").arg(paths.size()));
    return;
  }
  compareFiles(paths[0], paths[1]);
}

void CompareController::compareFiles(const QString& pathA, const QString& pathB) {
  if (watcher_.isRunning()) return;  // one comparison at a time
  watcher_.setFuture(QtConcurrent::run([pathA, pathB] {
    Loaded r;
    try {
      const OpenedFile a = loadFile(pathA), b = loadFile(pathB);
      r.files = compareOpenedFiles(a, b);
    } catch (const std::exception& e) {
      r.error = QString::fromStdString(e.what());
    }
    return r;
  }));
}

void CompareController::compareRuns(int idA, int idB) {
  const RunEntry* entries[2] = {nullptr, nullptr};
  std::shared_ptr<const StrategiesReport> reports[2];
  const int ids[2] = {idA, idB};
  for (int s = 0; s < 2; ++s) {
    for (const RunEntry& e : history_->entries())
      if (e.id == ids[s]) entries[s] = &e;
    for (const auto& [id, report] : reports_)
      if (id == ids[s]) reports[s] = report;
    if (!entries[s]) return fail(tr("There is no run #%1 in the history.").arg(ids[s]));
    if (entries[s]->results.isEmpty())
      return fail(tr("Run #%1 failed as a whole (%2): it has nothing to compare.")
                      .arg(ids[s])
                      .arg(entries[s]->error));
  }
  try {
    show(matmulviz::ui::compareRuns(*entries[0], reports[0], *entries[1], reports[1]));
  } catch (const std::exception& e) {
    fail(QString::fromStdString(e.what()));
  }
}

void CompareController::show(std::shared_ptr<const ComparedFiles> files) {
  if (!window_) {
    window_ = new CompareWindow(parentWindow_);
    window_->setAttribute(Qt::WA_DeleteOnClose);
  }
  window_->setComparison(std::move(files));
  window_->show();
  window_->raise();
  window_->activateWindow();
  emit compared();
}

void CompareController::fail(const QString& message) {
  auto* box = new QMessageBox(QMessageBox::Warning, tr("Cannot compare"), message, QMessageBox::Ok,
                              parentWindow_);
  box->setObjectName("compareErrorBox");
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();
  emit failed(message);
}

}  // namespace matmulviz::ui
