// BudgetView: tracing a script's function (the graph box's examples/budget_*.py entries and
// "Trace a function..."), with progress and Cancel, and the message when it fails.
#include "ui/models/budget_explorer.h"
#include "ui/widgets/budget_tracer.h"
#include "ui/widgets/budget_view.h"

#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>

namespace matmulviz::ui {

namespace {

/// Asks for a script and a function name (the last ones used, else the first example and f).
/// False when the user cancels or leaves either empty.
bool askTraceTarget(QWidget* parent, QString* script, QString* function) {
  QDialog dialog(parent);
  dialog.setObjectName("budgetTraceDialog");
  dialog.setWindowTitle(QObject::tr("Trace a function"));
  auto* form = new QFormLayout(&dialog);
  const QStringList examples = BudgetTracer::exampleScripts();
  QSettings settings;
  auto* path = new QLineEdit(settings.value("budget/traceScript", examples.value(0)).toString());
  path->setMinimumWidth(420);
  auto* browse = new QPushButton(QObject::tr("Browse…"));
  auto* row = new QHBoxLayout;
  row->addWidget(path, 1);
  row->addWidget(browse);
  auto* name = new QLineEdit(settings.value("budget/traceFunction", "f").toString());
  form->addRow(QObject::tr("Python script"), row);
  form->addRow(QObject::tr("Function"), name);
  form->addRow(new QLabel(
      QObject::tr("The function takes no arguments and returns a scalar loss; the script uses "
                  "import matmulviz.torch as torch.")));
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
  buttons->button(QDialogButtonBox::Ok)->setText(QObject::tr("Trace"));
  form->addRow(buttons);
  QObject::connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
  QObject::connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
  QObject::connect(browse, &QPushButton::clicked, &dialog, [&] {
    const QString chosen = QFileDialog::getOpenFileName(
        &dialog, QObject::tr("Python script"), QFileInfo(path->text()).absolutePath(),
        QObject::tr("Python scripts (*.py);;All files (*)"));
    if (!chosen.isEmpty()) path->setText(chosen);
  });
  if (dialog.exec() != QDialog::Accepted) return false;
  *script = path->text().trimmed();
  *function = name->text().trimmed();
  if (script->isEmpty() || function->isEmpty()) return false;
  settings.setValue("budget/traceScript", *script);
  settings.setValue("budget/traceFunction", *function);
  return true;
}

}  // namespace

QWidget* BudgetView::buildTraceRow() {
  traceRow_ = new QWidget;
  traceRow_->setObjectName("budgetTraceRow");
  auto* h = new QHBoxLayout(traceRow_);
  h->setContentsMargins(0, 0, 0, 0);
  traceText_ = new QLabel;
  traceBusy_ = new QProgressBar;
  traceBusy_->setRange(0, 0);  // busy: the tracer reports no fraction
  traceBusy_->setMaximumWidth(200);
  auto* cancel = new QPushButton(tr("Cancel"));
  cancel->setObjectName("budgetTraceCancel");
  h->addWidget(traceText_);
  h->addWidget(traceBusy_);
  h->addWidget(cancel);
  h->addStretch(1);
  traceRow_->hide();
  connect(cancel, &QPushButton::clicked, tracer_, &BudgetTracer::cancel);
  connect(tracer_, &BudgetTracer::finished, this,
          [this](std::shared_ptr<const partitioner::JointGraph> graph, const QString& title) {
            showTraceRow(false);
            setGraph(std::move(graph), title);
          });
  connect(tracer_, &BudgetTracer::failed, this, &BudgetView::onTraceFailed);
  connect(tracer_, &BudgetTracer::cancelled, this, [this] {
    showTraceRow(false);
    example_->setCurrentIndex(example_->findText(explorer_->title()));
  });
  return traceRow_;
}

void BudgetView::showTraceRow(bool on) {
  traceRow_->setVisible(on);
  traceButton_->setEnabled(!on);
}

void BudgetView::traceFunction(const QString& script, const QString& function) {
  traceText_->setText(tr("Tracing %1 of %2…").arg(function, QFileInfo(script).fileName()));
  showTraceRow(true);
  tracer_->trace(script, function);
}

void BudgetView::onGraphChosen() {
  const QString data = example_->currentData().toString();
  const QString title = example_->currentText();
  if (data.startsWith(QLatin1String(kTracePrefix)) || data == QLatin1String(kGraphPrefix)) {
    if (auto it = traced_.constFind(title); it != traced_.constEnd()) {
      explorer_->setGraph(*it, title);
    } else if (data != QLatin1String(kGraphPrefix)) {
      traceFunction(data.mid(qsizetype(qstrlen(kTracePrefix))), QStringLiteral("f"));
    }
    return;
  }
  selectExample(data);
}

void BudgetView::askAndTrace() {
  QString script, function;
  if (askTraceTarget(this, &script, &function)) traceFunction(script, function);
}

void BudgetView::onTraceFailed(const QString& message) {
  showTraceRow(false);
  example_->setCurrentIndex(example_->findText(explorer_->title()));  // the graph still shown
  auto* box = new QMessageBox(QMessageBox::Warning, tr("Cannot trace the function"),
                              tr("Cannot trace %1; the graph shown stays.").arg(tracer_->target()),
                              QMessageBox::Ok, this);
  box->setInformativeText(message);
  box->setObjectName("budgetTraceError");
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();
}

}  // namespace matmulviz::ui
