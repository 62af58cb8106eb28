#include "ui/widgets/multihead_view.h"
#include "core/util/format_units.h"

#include "core/memory/caching_allocator.h"
#include "ui/models/qstring_of.h"
#include "ui/widgets/multihead_canvas.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>
#include <QSplitter>
#include <QTextBrowser>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

namespace matmulviz::ui {
MultiheadView::MultiheadView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QHBoxLayout(this);
  layout->addWidget(buildControls());
  auto* split = new QSplitter(Qt::Vertical);
  canvas_ = new MultiheadCanvas;
  info_ = new QTextBrowser;
  info_->setObjectName("multiheadInfo");
  split->addWidget(canvas_);
  split->addWidget(info_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  layout->addWidget(split, 1);
  watcher_ = new QFutureWatcher<std::shared_ptr<const MultiheadReport>>(this);
  connect(watcher_, &QFutureWatcherBase::finished, this, &MultiheadView::onFinished);
}

MultiheadView::~MultiheadView() {
  watcher_->waitForFinished();
}

QWidget* MultiheadView::buildControls() {
  auto* box = new QGroupBox(tr("matmul_with_importance"));
  box->setMaximumWidth(300);
  auto* form = new QFormLayout(box);
  auto spin = [&](const char* name, int min, int max, int value, const QString& tip) {
    auto* s = new QSpinBox;
    s->setObjectName(QString("mh_") + name);
    s->setRange(min, max);
    s->setValue(value);
    s->setToolTip(tr("%1 (allowed %2 to %3)").arg(tip).arg(min).arg(max));
    form->addRow(tr(name), s);
    connect(s, &QSpinBox::editingFinished, this, &MultiheadView::run);
    return s;
  };
  b_ = spin("b", 1, 64, 2, tr("batch"));
  s_ = spin("s", 1, 512, 8, tr("sequence length"));
  h_ = spin("h", 1, 1024, 16, tr("hidden size, split into heads"));
  e_ = spin("e", 1, 256, 4, tr("output size per head"));
  heads_ = spin("heads", 1, 1024, 4, tr("num_heads: must divide h"));
  dtype_ = new QComboBox;
  dtype_->addItems({"float32", "float16", "bfloat16"});
  form->addRow(tr("dtype"), dtype_);
  topP_ = new QSlider(Qt::Horizontal);
  topP_->setObjectName("mh_topP");
  topP_->setRange(0, 100);
  topP_->setValue(10);
  topPLabel_ = new QLabel;
  form->addRow(topPLabel_, topP_);
  topK_ = new QSlider(Qt::Horizontal);
  topK_->setObjectName("mh_topK");
  topK_->setRange(1, 8);
  topK_->setValue(3);
  topKLabel_ = new QLabel;
  form->addRow(topKLabel_, topK_);
  topKNone_ = new QCheckBox(tr("top_k none (= s)"));
  form->addRow(QString(), topKNone_);
  backward_ = new QCheckBox(tr("backward (dA1, dW1)"));
  backward_->setChecked(true);
  form->addRow(QString(), backward_);
  batch_ = new QSpinBox;
  batch_->setRange(0, 1);
  batch_->setToolTip(tr("The batch row whose A1 is drawn split into heads"));
  form->addRow(tr("draw batch"), batch_);
  auto* runButton = new QPushButton(tr("Run"));
  runButton->setObjectName("mh_run");
  runButton->setToolTip(tr("Run matmul_with_importance with these sizes (sliders run it too)"));
  connect(runButton, &QPushButton::clicked, this, &MultiheadView::run);
  form->addRow(runButton);
  error_ = new QLabel;
  error_->setWordWrap(true);
  error_->setStyleSheet("color: #b00020;");
  form->addRow(error_);
  connect(topP_, &QSlider::valueChanged, this, &MultiheadView::run);
  connect(topK_, &QSlider::valueChanged, this, &MultiheadView::run);
  for (QCheckBox* c : {topKNone_, backward_})
    connect(c, &QCheckBox::toggled, this, &MultiheadView::run);
  connect(dtype_, &QComboBox::currentIndexChanged, this, &MultiheadView::run);
  connect(batch_, &QSpinBox::valueChanged, this, [this](int b) { canvas_->setBatch(b); });
  updateSliderLabels();
  return box;
}

void MultiheadView::updateSliderLabels() {
  topK_->setMaximum(s_->value());
  topK_->setEnabled(!topKNone_->isChecked());
  batch_->setMaximum(b_->value() - 1);
  topPLabel_->setText(tr("top_p %1").arg(topP_->value() / 100.0, 0, 'f', 2));
  topKLabel_->setText(topKNone_->isChecked() ? tr("top_k none")
                                             : tr("top_k %1").arg(topK_->value()));
}

MultiheadConfig MultiheadView::config() const {
  MultiheadConfig c;
  c.b = b_->value(), c.s = s_->value(), c.h = h_->value(), c.e = e_->value();
  c.numHeads = heads_->value();
  c.topP = topP_->value() / 100.0;
  if (!topKNone_->isChecked()) c.topK = std::min(topK_->value(), s_->value());
  c.dtype = parseDType(dtype_->currentText().toStdString());
  c.backward = backward_->isChecked();
  return c;
}

void MultiheadView::setConfig(const MultiheadConfig& c) {
  for (QWidget* w : std::initializer_list<QWidget*>{b_, s_, h_, e_, heads_, topP_, topK_, topKNone_,
                                                    backward_, dtype_})
    w->blockSignals(true);
  b_->setValue(int(c.b)), s_->setValue(int(c.s)), h_->setValue(int(c.h)), e_->setValue(int(c.e));
  heads_->setValue(int(c.numHeads));
  topP_->setValue(int(std::lround(c.topP * 100)));
  topK_->setMaximum(int(c.s));
  topKNone_->setChecked(!c.topK);
  if (c.topK) topK_->setValue(int(*c.topK));
  backward_->setChecked(c.backward);
  dtype_->setCurrentText(QString::fromStdString(std::string(dtypeName(c.dtype))));
  for (QWidget* w : std::initializer_list<QWidget*>{b_, s_, h_, e_, heads_, topP_, topK_, topKNone_,
                                                    backward_, dtype_})
    w->blockSignals(false);
  run();
}

bool MultiheadView::isRunning() const {
  return busy_;
}

void MultiheadView::run() {
  updateSliderLabels();
  const MultiheadConfig c = config();
  try {
    c.validate();
  } catch (const std::exception& e) {
    error_->setText(QString::fromUtf8(e.what()));  // refused at the field: nothing runs
    return;
  }
  error_->clear();
  busy_ = true;
  if (watcher_->isRunning()) {
    pending_ = c;  // the latest request wins
    return;
  }
  watcher_->setFuture(QtConcurrent::run([c]() -> std::shared_ptr<const MultiheadReport> {
    return std::make_shared<const MultiheadReport>(runMultihead(c));
  }));
}

void MultiheadView::onFinished() {
  try {
    report_ = watcher_->result();
    canvas_->setReport(report_);
    describe(*report_);
    emit reportReady(report_);
  } catch (const std::exception& e) {
    error_->setText(QString::fromUtf8(e.what()));
    emit failed(error_->text());
  }
  busy_ = pending_.has_value();
  if (pending_) {
    const MultiheadConfig next = *pending_;
    pending_.reset();
    watcher_->setFuture(QtConcurrent::run([next]() -> std::shared_ptr<const MultiheadReport> {
      return std::make_shared<const MultiheadReport>(runMultihead(next));
    }));
  }
}

void MultiheadView::describe(const MultiheadReport& r) {
  QString html =
      tr("<p><b>t = %1</b> important tokens of %2. O3 %3. curMem %4, maxMem %5 "
         "(inputs %6). %7</p>")
          .arg(r.t)
          .arg(r.config.b * r.config.s)
          .arg(r.O3.defined() ? QString::fromStdString(r.O3.shapeString()) : "-")
          .arg(bytesText(r.current.allocatedBytes), bytesText(r.peak.allocatedBytes),
               bytesText(r.afterInputs.allocatedBytes))
          .arg(r.config.backward ? tr("|dA1| = %1, |dW1| = %2.")
                                       .arg(r.normDA1, 0, 'g', 5)
                                       .arg(r.normDW1, 0, 'g', 5)
                                 : tr("No grad_output: no autograd graph, nothing saved."));
  if (!r.savedForBackward.empty()) {
    html += tr("<p>Saved for backward (%1 of new memory):</p><ul>").arg(bytesText(r.savedBytes));
    for (const KeptAlive& k : r.savedForBackward)
      html += QString("<li><b>%1</b>, %2: %3</li>")
                  .arg(QString::fromStdString(k.label).toHtmlEscaped(), bytesText(k.bytes),
                       QString::fromStdString(k.why).toHtmlEscaped());
    html += "</ul>";
  }
  info_->setHtml(html);
}

void MultiheadView::setPresentationMode(bool on) {
  canvas_->setPresentationMode(on);
}

}  // namespace matmulviz::ui
