// ProgramView: running the script, showing its report, and linking the code and the timeline.
#include "core/util/format_units.h"
#include "ui/charts/program_timeline_chart.h"
#include "ui/charts/search_chart.h"
#include "ui/models/peak_table_model.h"
#include "ui/models/program_run.h"
#include "ui/models/qstring_of.h"
#include "ui/widgets/peak_flame_bar.h"
#include "ui/widgets/program_editor.h"
#include "ui/widgets/program_runner.h"
#include "ui/widgets/program_view.h"

#include <QFileInfo>
#include <QItemSelectionModel>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollBar>
#include <QTextCursor>
#include <QTimer>
#include <QTreeView>

namespace matmulviz::ui {

void ProgramView::wireLinks() {
  connect(runner_, &ProgramRunner::output, this, &ProgramView::appendOutput);
  connect(runner_, &ProgramRunner::finished, this, &ProgramView::onFinished);
  connect(chart_, &ProgramTimelineChart::eventClicked, this, &ProgramView::selectEvent);
  connect(editor_, &ProgramEditor::cursorLineChanged, this, &ProgramView::selectLine);
  connect(editor_, &ProgramEditor::escapePressed, this, &ProgramView::cancel);
  connect(flame_, &PeakFlameBar::lineClicked, this, &ProgramView::selectLine);
  connect(peakTable_->selectionModel(), &QItemSelectionModel::currentChanged, this,
          [this](const QModelIndex& current) {
            if (current.isValid()) selectLine(current.data(PeakTableModel::ScriptLineRole).toInt());
          });
}

bool ProgramView::isRunning() const {
  return runner_->isRunning();
}

void ProgramView::run() {
  if (runner_->isRunning()) return;
  if (path_.isEmpty() && editor_->text().trimmed().isEmpty()) {
    setStatus(tr("Nothing to run: open a Python script (File > Open) or type one"));
    return;
  }
  if ((path_.isEmpty() || editor_->isModified()) && !save()) return;
  output_->clear();
  setBusy(true);
  setStatus(tr("Running %1…").arg(QFileInfo(path_).fileName()));
  SimulationSettings settings = simulationSettings();
  // {} marks the searched argument: a plain run takes the last search's answer, else 1.
  const SearchResults* searched = searchChart_->results();
  settings.arguments.replace(
      QLatin1String("{}"), QString::number(searched && searched->largest ? *searched->largest : 1));
  runner_->setSimulation(settings);
  runner_->start(path_);
}

void ProgramView::cancel() {
  if (!runner_->isRunning()) return;
  setStatus(tr("Cancelling…"));
  runner_->cancel();
}

void ProgramView::setBusy(bool busy) {
  busy_->setVisible(busy);
  runButton_->setEnabled(!busy);
  searchButton_->setEnabled(!busy);
  cancelButton_->setEnabled(busy);
  if (busy) {
    elapsed_->setText(tr("0.0 s"));
    tick_->start();
  } else {
    tick_->stop();
  }
}

void ProgramView::appendOutput(const QString& text, bool isError) {
  QTextCursor cursor(output_->document());
  cursor.movePosition(QTextCursor::End);
  QTextCharFormat format;
  format.setForeground(isError ? QColor(150, 20, 20) : palette().color(QPalette::Text));
  cursor.insertText(text, format);
  output_->verticalScrollBar()->setValue(output_->verticalScrollBar()->maximum());
}

QString ProgramView::summary(const ProgramRun& run) const {
  if (run.peakEvent() < 0) return tr("nothing was allocated on the GPU");
  QString text = tr("peak %1 at event %2").arg(bytesText(run.peakBytes())).arg(run.peakEvent());
  if (!run.peakGroups().isEmpty()) {
    const auto& top = run.peakGroups().front();
    text += tr("; most of it from %1 (%2)").arg(top.where, bytesText(top.bytes));
  }
  return text;
}

void ProgramView::onFinished(int exitCode, bool cancelled,
                             std::shared_ptr<const PythonReport> report, const QString& problem) {
  setBusy(false);
  const QString seconds = QString::number(runner_->elapsedMs() / 1000.0, 'f', 1);
  if (cancelled) {
    appendOutput(tr("\n[cancelled after %1 s]\n").arg(seconds), true);
    setStatus(tr("Cancelled after %1 s; the results of the last run stay").arg(seconds));
    emit runEnded(false);
    return;
  }
  if (!report) {
    appendOutput(QLatin1Char('\n') + problem + QLatin1Char('\n'), true);
    setStatus(tr("The run gave no results: %1").arg(problem));
    emit runEnded(false);
    return;
  }
  setRun(std::make_shared<const ProgramRun>(report, path_));
  if (report->complete && exitCode == 0)
    setStatus(tr("Ran in %1 s: %2").arg(seconds, summary(*run_)));
  else
    setStatus(tr("The script failed (exit status %1; its traceback is in the output): what ran "
                 "until then is shown, %2")
                  .arg(exitCode)
                  .arg(summary(*run_)));
  emit runEnded(true);
}

void ProgramView::showReport(std::shared_ptr<const PythonReport> report,
                             const QString& reportName) {
  const QString script = report->script ? QString::fromStdString(*report->script) : QString();
  if (!script.isEmpty() && QFileInfo(script).isFile() && !runner_->isRunning()) openScript(script);
  setRun(std::make_shared<const ProgramRun>(std::move(report), path_));
  setStatus(tr("Opened %1: %2%3")
                .arg(reportName, summary(*run_),
                     run_->report().complete ? QString()
                                             : tr(" (the script failed: what ran until then)")));
  if (!run_->report().error.empty())
    appendOutput(QString::fromStdString(run_->report().error) + QLatin1Char('\n'), true);
}

void ProgramView::setRun(std::shared_ptr<const ProgramRun> run) {
  run_ = std::move(run);
  editor_->setRun(run_);
  editor_->highlightLine(0);
  chart_->setRun(run_);
  peakModel_->setRun(run_);
  peakTable_->expandAll();
  for (int c = 0; c < PeakTableModel::Code; ++c) peakTable_->resizeColumnToContents(c);
  // A long owner ("saved as mat2 of BmmBackward0 because ...") must not push the bytes out of
  // sight: it is elided where the table is narrow, and its tooltip has it whole.
  int others = 0;
  for (int c = PeakTableModel::Bytes; c < PeakTableModel::Code; ++c)
    others += peakTable_->columnWidth(c);
  const int most =
      std::max(fontMetrics().averageCharWidth() * 40, peakTable_->viewport()->width() - others);
  if (peakTable_->columnWidth(PeakTableModel::Where) > most)
    peakTable_->setColumnWidth(PeakTableModel::Where, most);
  flame_->setRun(run_);
  detail_->setText(run_ ? tr("Click a point of the timeline to find the line that allocated it; "
                             "put the cursor on a line to see its allocations.")
                        : QString());
}

void ProgramView::selectLine(int line) {
  if (linking_ || !run_) return;
  linking_ = true;
  const int shown = run_->lines().contains(line) ? line : 0;
  editor_->highlightLine(shown, false);
  chart_->highlightLine(shown);
  flame_->setSelectedLine(shown);
  const QModelIndex row = peakModel_->indexOfLine(shown);
  if (row.isValid())
    peakTable_->setCurrentIndex(row);
  else
    peakTable_->selectionModel()->clearSelection();
  if (shown > 0) {
    const auto& l = run_->lines()[shown];
    detail_->setText(
        tr("Line %1 allocated %2 in %n blocks over the run; %3 of it alive at the peak", nullptr,
           l.allocations)
            .arg(shown)
            .arg(bytesText(l.allocatedBytes), bytesText(l.aliveAtPeakBytes)));
  }
  linking_ = false;
}

void ProgramView::selectEvent(int e) {
  if (!run_) return;
  chart_->selectEvent(e);
  const int line = run_->scriptLineOfEvent(e);
  if (line > 0) {
    selectLine(line);
    linking_ = true;
    editor_->highlightLine(line);  // and the cursor, so that typing starts there
    linking_ = false;
  } else {
    selectLine(0);
  }
  QString text = run_->eventText(e);
  if (line == 0 && run_->frameOfEvent(e) < 0)
    text += tr("\n(no line of this script: made by the engine or before the recording)");
  detail_->setText(text);
}

}  // namespace matmulviz::ui
