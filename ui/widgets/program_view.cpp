// ProgramView: its layout, opening and saving the script (running it: program_view_run.cpp).
#include "ui/widgets/program_view.h"

#include "ui/charts/program_timeline_chart.h"
#include "ui/charts/search_chart.h"
#include "ui/models/peak_table_model.h"
#include "ui/models/program_run.h"
#include "ui/widgets/peak_flame_bar.h"
#include "ui/widgets/program_editor.h"
#include "ui/widgets/program_runner.h"

#include <QAction>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSaveFile>
#include <QSplitter>
#include <QTabWidget>
#include <QTimer>
#include <QTreeView>
#include <QVBoxLayout>

namespace matmulviz::ui {

ProgramView::ProgramView(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("programView"));
  runner_ = new ProgramRunner(this);
  editor_ = new ProgramEditor;
  output_ = new QPlainTextEdit;
  output_->setObjectName(QStringLiteral("programOutput"));
  output_->setReadOnly(true);
  output_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  output_->setPlaceholderText(tr("What the script prints (stdout and stderr) shows here."));
  title_ = new QLabel(tr("No script: File > Open a .py file, or type one here and Save"));
  title_->setWordWrap(true);
  auto* left = new QSplitter(Qt::Vertical);
  auto* editorBox = new QWidget;
  auto* editorLayout = new QVBoxLayout(editorBox);
  editorLayout->setContentsMargins(0, 0, 0, 0);
  editorLayout->addWidget(title_);
  editorLayout->addWidget(editor_, 1);
  left->addWidget(editorBox);
  left->addWidget(output_);
  left->setStretchFactor(0, 4);
  left->setStretchFactor(1, 1);
  auto* split = new QSplitter(Qt::Horizontal);
  split->setObjectName(QStringLiteral("programSplitter"));
  split->addWidget(left);
  split->addWidget(buildRightSide());
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 1);
  split->setSizes({550, 650});  // the code needs room beside its margin
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(buildToolbar());
  layout->addWidget(buildSimulationBar());
  layout->addWidget(split, 1);
  auto* saveAction = new QAction(tr("Save"), this);
  saveAction->setShortcut(QKeySequence::Save);
  saveAction->setShortcutContext(Qt::WidgetWithChildrenShortcut);
  connect(saveAction, &QAction::triggered, this, [this] { save(); });
  addAction(saveAction);
  wireLinks();
  connect(editor_, &QsciScintilla::modificationChanged, this, [this](bool modified) {
    if (modified && run_)
      setStatus(
          tr("The script changed since its run: the margin and the links follow the run's "
             "lines until you run it again (Ctrl+R)"));
  });
}

ProgramView::~ProgramView() = default;

QWidget* ProgramView::buildToolbar() {
  auto* bar = new QWidget;
  auto* row = new QHBoxLayout(bar);
  row->setContentsMargins(0, 0, 0, 0);
  auto* open = new QPushButton(tr("Open…"));
  open->setToolTip(tr("Open a Python script (File > Open, Ctrl+O, opens one too)"));
  connect(open, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open a Python script"), QString(),
                                                      tr("Python scripts (*.py);;All files (*)"));
    QString error;
    if (!path.isEmpty() && !openScript(path, &error)) setStatus(error);
  });
  auto* saveButton = new QPushButton(tr("Save"));
  saveButton->setToolTip(tr("Save the script (Ctrl+S)"));
  connect(saveButton, &QPushButton::clicked, this, [this] { save(); });
  runButton_ = new QPushButton(tr("Run"));
  runButton_->setObjectName(QStringLiteral("programRun"));
  runButton_->setToolTip(
      tr("Save the script and run it on the simulated GPU, recording every "
         "allocation with its line (Ctrl+R)"));
  connect(runButton_, &QPushButton::clicked, this, &ProgramView::run);
  cancelButton_ = new QPushButton(tr("Cancel"));
  cancelButton_->setObjectName(QStringLiteral("programCancel"));
  cancelButton_->setToolTip(tr("Stop the script now (Esc); the last results stay"));
  cancelButton_->setEnabled(false);
  connect(cancelButton_, &QPushButton::clicked, this, &ProgramView::cancel);
  busy_ = new QProgressBar;
  busy_->setRange(0, 0);
  busy_->setMaximumWidth(120);
  busy_->hide();
  elapsed_ = new QLabel;
  status_ = new QLabel(tr("Run the script to see its memory, line by line"));
  status_->setObjectName(QStringLiteral("programStatus"));
  status_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  status_->setWordWrap(true);  // a failed run's status is long: two lines, not cut off
  for (QWidget* w : {static_cast<QWidget*>(open), static_cast<QWidget*>(saveButton),
                     static_cast<QWidget*>(runButton_), static_cast<QWidget*>(cancelButton_),
                     static_cast<QWidget*>(busy_), static_cast<QWidget*>(elapsed_)})
    row->addWidget(w);
  row->addWidget(status_, 1);
  tick_ = new QTimer(this);
  tick_->setInterval(100);
  connect(tick_, &QTimer::timeout, this,
          [this] { elapsed_->setText(tr("%1 s").arg(runner_->elapsedMs() / 1000.0, 0, 'f', 1)); });
  return bar;
}

QWidget* ProgramView::buildRightSide() {
  chart_ = new ProgramTimelineChart;
  detail_ =
      new QLabel(tr("Click a point of the timeline to find the line that allocated it; put "
                    "the cursor on a line to see its allocations."));
  detail_->setObjectName(QStringLiteral("programDetail"));
  detail_->setWordWrap(true);
  detail_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  detail_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  flame_ = new PeakFlameBar;
  peakModel_ = new PeakTableModel(this);
  peakTable_ = new QTreeView;
  peakTable_->setObjectName(QStringLiteral("peakTable"));
  peakTable_->setModel(peakModel_);
  peakTable_->setAlternatingRowColors(true);
  peakTable_->setUniformRowHeights(true);
  peakTable_->header()->setStretchLastSection(true);
  auto* peakTitle =
      new QLabel(tr("<b>What is alive at the peak</b>, by line and by what keeps "
                    "it alive"));
  auto* peakBox = new QWidget;
  auto* peakLayout = new QVBoxLayout(peakBox);
  peakLayout->setContentsMargins(0, 0, 0, 0);
  peakLayout->addWidget(peakTitle);
  peakLayout->addWidget(flame_);
  peakLayout->addWidget(peakTable_, 1);
  auto* chartBox = new QWidget;
  auto* chartLayout = new QVBoxLayout(chartBox);
  chartLayout->setContentsMargins(0, 0, 0, 0);
  chartLayout->addWidget(chart_, 1);
  chartLayout->addWidget(detail_);
  searchChart_ = new SearchChart;
  tabs_ = new QTabWidget;
  tabs_->setObjectName(QStringLiteral("programChartTabs"));
  tabs_->addTab(chartBox, tr("Timeline"));
  tabs_->addTab(searchChart_, tr("Largest batch"));
  auto* right = new QSplitter(Qt::Vertical);
  right->addWidget(tabs_);
  right->addWidget(peakBox);
  right->setStretchFactor(0, 3);
  right->setStretchFactor(1, 2);
  return right;
}

bool ProgramView::openScript(const QString& path, QString* error) {
  if (runner_->isRunning()) {  // its results belong to the script that is running
    if (error)
      *error = tr("'%1' was not opened: a script is running in the Program view (Cancel it "
                  "first, Esc)")
                   .arg(QFileInfo(path).fileName());
    return false;
  }
  if (editor_->isModified() && !editor_->text().isEmpty() &&
      QMessageBox::question(this, tr("Open another script"),
                            tr("The script in the Program view has changes that are not saved. "
                               "Open %1 and lose them?")
                                .arg(QFileInfo(path).fileName())) != QMessageBox::Yes) {
    if (error)
      *error = tr("'%1' was not opened: the changes in the editor were kept")
                   .arg(QFileInfo(path).fileName());
    return false;
  }
  QFile file(path);
  if (!QFileInfo(path).isFile() || !file.open(QIODevice::ReadOnly)) {
    if (error)
      *error = tr("'%1': the file cannot be read (%2)")
                   .arg(QFileInfo(path).fileName(),
                        QFileInfo::exists(path) ? tr("not readable") : tr("not found"));
    return false;
  }
  editor_->setText(QString::fromUtf8(file.readAll()));
  editor_->setModified(false);
  path_ = QFileInfo(path).absoluteFilePath();
  title_->setText(tr("<b>%1</b>; after a run, beside each line: the bytes it allocated, then "
                     "the bytes it held at the peak")
                      .arg(QFileInfo(path).fileName().toHtmlEscaped()));
  setRun(nullptr);
  output_->clear();
  setStatus(tr("Opened %1: Run (Ctrl+R) to see its memory").arg(QFileInfo(path).fileName()));
  return true;
}

bool ProgramView::save(QString* error) {
  if (path_.isEmpty()) {
    const QString path = QFileDialog::getSaveFileName(this, tr("Save the script"), QString(),
                                                      tr("Python scripts (*.py)"));
    if (path.isEmpty()) return false;
    path_ = QFileInfo(path).absoluteFilePath();
  }
  QSaveFile file(path_);
  const QByteArray bytes = editor_->text().toUtf8();
  if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size() || !file.commit()) {
    const QString message =
        tr("'%1': could not be saved (%2)").arg(QFileInfo(path_).fileName(), file.errorString());
    if (error) *error = message;
    setStatus(message);
    return false;
  }
  editor_->setModified(false);
  setStatus(tr("Saved %1").arg(QFileInfo(path_).fileName()));
  return true;
}

QString ProgramView::statusText() const {
  return status_->text();
}

void ProgramView::setStatus(const QString& text) {
  status_->setText(text);
  status_->setToolTip(text);
}

}  // namespace matmulviz::ui
