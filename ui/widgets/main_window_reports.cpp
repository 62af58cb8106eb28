// MainWindow: the reports that hold no timeline (core/report/other_reports.h), opened where they
// belong: a multi-head run's workload rerun in the Multi-head view, a budget sweep's function
// traced again in the Budget view, an einsum run summarised with the command that reruns it.
#include "core/util/format_units.h"
#include "ui/widgets/budget_view.h"
#include "ui/widgets/main_window.h"
#include "ui/widgets/multihead_view.h"

#include "ui/models/qstring_of.h"

#include <QDir>
#include <QFileInfo>
#include <QMessageBox>

namespace matmulviz::ui {

namespace {

/// The script a report names: as written (absolute, or relative to the current folder), else
/// beside the report; empty when neither is there.
QString findScript(const QString& reportPath, const QString& script) {
  if (QFileInfo(script).isFile()) return QFileInfo(script).absoluteFilePath();
  const QString beside = QFileInfo(reportPath).dir().filePath(QFileInfo(script).fileName());
  return QFileInfo(beside).isFile() ? beside : QString();
}

/// "matmulviz-cli einsum 'ij,jk->ij' --shapes 2x3,3x4 --dtype float32".
QString einsumCommand(const EinsumReportFile& r) {
  QStringList shapes;
  for (const auto& s : r.operandShapes) {
    QStringList dims;
    for (const int64_t d : s) dims << QString::number(d);
    shapes << (dims.isEmpty() ? QStringLiteral("scalar") : dims.join('x'));
  }
  return QStringLiteral("matmulviz-cli einsum '%1' --shapes %2 --dtype %3")
      .arg(qs(r.equation), shapes.join(','), qs(r.dtype));
}

}  // namespace

QString MainWindow::openReportWithoutTimeline(const OpenedFile& file) {
  if (file.multihead) {
    const MultiheadReportFile& r = *file.multihead;
    showView(View::Multihead);
    multiheadView_->setConfig(r.config);  // runs it
    return tr("Opened %1: a multi-head run on %2 (%3, maxMem %4); its workload runs again here")
        .arg(file.fileName, qs(r.device), qs(formatSeconds(r.timeS)),
             qs(formatSize(r.maxMemBytes)));
  }
  if (file.budget) {
    const BudgetReportFile& r = *file.budget;
    const QString script = findScript(file.path, qs(r.script));
    if (script.isEmpty()) {
      auto* box = new QMessageBox(
          QMessageBox::Information, tr("A budget sweep"),
          tr("%1 is a budget sweep of %2 in %3, which is not on this machine (nor beside the "
             "report). Put the script beside the report and open it again, or open a graph "
             "file of it (matmulviz-cli budget SCRIPT --graph-out FILE --no-sweep).")
              .arg(file.fileName, qs(r.function), qs(r.script)),
          QMessageBox::Ok, this);
      box->setObjectName("reportNoteBox");
      box->setAttribute(Qt::WA_DeleteOnClose);
      box->open();
      return tr("Opened %1: a budget sweep; its script is not here").arg(file.fileName);
    }
    budgetView_->traceFunction(script, qs(r.function));
    showView(View::Budget);
    return tr("Opened %1: a budget sweep of %2 in %3, traced again here")
        .arg(file.fileName, qs(r.function), QFileInfo(script).fileName());
  }
  if (file.einsum) {
    const QString summary = qs(einsumSummary(*file.einsum));
    auto* box = new QMessageBox(QMessageBox::Information, tr("An einsum run"),
                                tr("%1\n\nNo view draws einsum runs; this reruns it here:\n%2")
                                    .arg(summary, einsumCommand(*file.einsum)),
                                QMessageBox::Ok, this);
    box->setObjectName("reportNoteBox");
    box->setTextInteractionFlags(Qt::TextSelectableByMouse);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
    return tr("Opened %1: %2").arg(file.fileName, summary);
  }
  return {};
}

}  // namespace matmulviz::ui
