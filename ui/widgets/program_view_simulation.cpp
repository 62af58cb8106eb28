// ProgramView: how a PyTorch script is simulated (its interpreter, GPU, capacity, arguments) and
// the largest-batch search drawn in the "Largest batch" tab.
#include "ui/charts/search_chart.h"
#include "ui/widgets/program_runner.h"
#include "ui/widgets/program_view.h"

#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTabWidget>

namespace matmulviz::ui {

QWidget* ProgramView::buildSimulationBar() {
  auto* bar = new QWidget;
  auto* row = new QHBoxLayout(bar);
  row->setContentsMargins(0, 0, 0, 0);
  const QString applies =
      tr("For a script that imports PyTorch: it runs unchanged under "
         "matmulviz.simulate, its CUDA tensors without values.");
  pythonBox_ = new QComboBox;
  pythonBox_->setObjectName(QStringLiteral("programPython"));
  for (const PythonChoice& c : ProgramRunner::pythonChoices()) pythonBox_->addItem(c.label, c.path);
  pythonBox_->setToolTip(applies + tr(" The interpreter, and so the PyTorch, that runs it."));
  gpuBox_ = new QComboBox;
  gpuBox_->setObjectName(QStringLiteral("programGpu"));
  gpuBox_->addItems(ProgramRunner::simulatedGpus());
  gpuBox_->setToolTip(applies + tr(" The simulated GPU: its memory is the capacity, its "
                                   "architecture sizes the cuBLAS workspace."));
  capacityEdit_ = new QLineEdit;
  capacityEdit_->setObjectName(QStringLiteral("programCapacity"));
  capacityEdit_->setPlaceholderText(tr("the GPU's"));
  capacityEdit_->setMaximumWidth(110);
  capacityEdit_->setToolTip(applies + tr(" A capacity other than the GPU's: 80GiB, 24GiB."));
  argumentsEdit_ = new QLineEdit;
  argumentsEdit_->setObjectName(QStringLiteral("programArguments"));
  argumentsEdit_->setPlaceholderText(tr("the script's arguments, e.g. --batch_size={}"));
  argumentsEdit_->setToolTip(
      applies +
      tr(" The script's own arguments. {} marks where \"Largest batch…\" puts each "
         "value it tries; a plain Run puts the last search's answer there (1 before any)."));
  searchButton_ = new QPushButton(tr("Largest batch…"));
  searchButton_->setObjectName(QStringLiteral("programSearch"));
  searchButton_->setToolTip(
      tr("Find the largest value of the argument holding {} whose simulated run fits the GPU: "
         "trials two at a time, doubling, then narrowing"));
  connect(searchButton_, &QPushButton::clicked, this, [this] { searchLargestBatch(); });
  row->addWidget(new QLabel(tr("PyTorch:")));
  row->addWidget(pythonBox_);
  row->addWidget(new QLabel(tr("GPU:")));
  row->addWidget(gpuBox_);
  row->addWidget(new QLabel(tr("Capacity:")));
  row->addWidget(capacityEdit_);
  row->addWidget(new QLabel(tr("Arguments:")));
  row->addWidget(argumentsEdit_, 1);
  row->addWidget(searchButton_);
  connect(runner_, &ProgramRunner::searchFinished, this, &ProgramView::onSearchFinished);
  return bar;
}

SimulationSettings ProgramView::simulationSettings() const {
  SimulationSettings s;
  s.python = pythonBox_->currentData().toString();
  s.gpu = gpuBox_->currentText();
  s.capacity = capacityEdit_->text().trimmed();
  s.arguments = argumentsEdit_->text();
  return s;
}

void ProgramView::setSimulationSettings(const SimulationSettings& s) {
  int i = pythonBox_->findData(s.python);
  if (i < 0) {
    pythonBox_->addItem(s.python, s.python);
    i = pythonBox_->count() - 1;
  }
  pythonBox_->setCurrentIndex(i);
  gpuBox_->setCurrentText(s.gpu);
  capacityEdit_->setText(s.capacity);
  argumentsEdit_->setText(s.arguments);
}

void ProgramView::searchLargestBatch(const QString& givenRange) {
  if (runner_->isRunning()) return;
  if (path_.isEmpty() && editor_->text().trimmed().isEmpty()) {
    setStatus(tr("Nothing to search: open a PyTorch script (File > Open)"));
    return;
  }
  if ((path_.isEmpty() || editor_->isModified()) && !save()) return;
  if (!ProgramRunner::usesPyTorch(path_)) {
    setStatus(
        tr("The largest-batch search runs PyTorch scripts (this one does not import "
           "torch)"));
    return;
  }
  if (!argumentsEdit_->text().contains(QLatin1String("{}"))) {
    setStatus(
        tr("Put {} in the arguments where the value goes (for example --batch_size={}), "
           "then search"));
    argumentsEdit_->setFocus();
    return;
  }
  QString range = givenRange;
  if (range.isEmpty()) {
    bool ok = false;
    range = QInputDialog::getText(this, tr("Largest batch that fits"),
                                  tr("Values to search, LO:HI (doubling from LO):"),
                                  QLineEdit::Normal, QStringLiteral("1:1024"), &ok);
    if (!ok || range.trimmed().isEmpty()) return;
  }
  output_->clear();
  setBusy(true);
  setStatus(tr("Searching %1 over %2 on %3…")
                .arg(QFileInfo(path_).fileName(), range.trimmed(), gpuBox_->currentText()));
  runner_->setSimulation(simulationSettings());
  runner_->startSearch(path_, range.trimmed());
}

void ProgramView::onSearchFinished(int, bool cancelled,
                                   std::shared_ptr<const SearchResults> results,
                                   const QString& problem) {
  setBusy(false);
  const QString seconds = QString::number(runner_->elapsedMs() / 1000.0, 'f', 1);
  if (cancelled || !results) {
    setStatus(cancelled ? tr("Search cancelled after %1 s").arg(seconds)
                        : tr("The search gave no results: %1").arg(problem));
    return;
  }
  const QString where =
      capacityEdit_->text().trimmed().isEmpty() ? gpuBox_->currentText() : capacityEdit_->text();
  searchChart_->setResults(results, where);
  tabs_->setCurrentWidget(searchChart_);
  setStatus(tr("%1 (%n runs, %2 s)", nullptr, static_cast<int>(results->trials.size()))
                .arg(searchChart_->title(), seconds));
}

}  // namespace matmulviz::ui
