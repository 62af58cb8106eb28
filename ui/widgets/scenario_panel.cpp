#include "ui/widgets/scenario_panel.h"
#include "core/util/format_units.h"

#include "core/memory/caching_allocator.h"
#include "core/strategies/strategy.h"
#include "core/util/parse_size.h"
#include "kernels/cuda/cuda_probe.h"
#include "ui/models/qstring_of.h"
#include "ui/widgets/kernel_combo.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QVBoxLayout>

#include <stdexcept>

namespace matmulviz::ui {
ScenarioPanel::ScenarioPanel(QWidget* parent) : QWidget(parent) {
  auto* outer = new QVBoxLayout(this);
  outer->addWidget(buildOpenedFileBox());
  fields_ = new QWidget(this);
  auto* layout = new QVBoxLayout(fields_);
  layout->setContentsMargins(0, 0, 0, 0);
  outer->addWidget(fields_);
  outer->addStretch(1);
  layout->addWidget(buildPresetRow());
  layout->addWidget(buildWorkloadGroup());
  layout->addWidget(buildFlagsGroup());
  layout->addWidget(buildKernelGroup());
  summary_ = new QLabel(this);
  summary_->setWordWrap(true);
  summary_->setObjectName("scenarioSummary");
  layout->addWidget(summary_);
  error_ = new QLabel(this);
  error_->setWordWrap(true);
  error_->setStyleSheet("color: #b00020;");
  error_->hide();
  layout->addWidget(error_);
  auto* buttons = new QHBoxLayout;
  run_ = new QPushButton(tr("Run strategies"), this);
  run_->setToolTip(tr("Run the selected strategies (Ctrl+R)"));
  cancel_ = new QPushButton(tr("Cancel"), this);
  cancel_->setEnabled(false);
  buttons->addWidget(run_);
  buttons->addWidget(cancel_);
  layout->addLayout(buttons);
  connect(run_, &QPushButton::clicked, this, &ScenarioPanel::runRequested);
  connect(cancel_, &QPushButton::clicked, this, &ScenarioPanel::cancelRequested);
  selectPreset(QStringLiteral("small"));
  updateSummary();
}

// While the window shows an opened file (a snapshot, a report), the panel says what it is in
// place of the scenario's fields, which have nothing to do with it.
QWidget* ScenarioPanel::buildOpenedFileBox() {
  opened_ = new QGroupBox(tr("Open file"), this);
  opened_->setObjectName("openedFile");
  auto* layout = new QVBoxLayout(opened_);
  openedText_ = new QLabel(opened_);
  openedText_->setObjectName("openedFileText");
  openedText_->setWordWrap(true);
  openedText_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(openedText_);
  auto* hint = new QLabel(tr("The views show this file. To run a scenario instead, go back to "
                             "the scenario's fields (or open a preset)."),
                          opened_);
  hint->setWordWrap(true);
  layout->addWidget(hint);
  auto* back = new QPushButton(tr("Back to a scenario"), opened_);
  back->setObjectName("backToScenario");
  back->setToolTip(tr("Show the scenario's fields again; Run (Ctrl+R) runs them"));
  layout->addWidget(back);
  connect(back, &QPushButton::clicked, this, [this] {
    clearOpenedFile();
    emit backToScenarioRequested();
  });
  opened_->hide();
  return opened_;
}

void ScenarioPanel::showOpenedFile(const QStringList& lines) {
  openedText_->setText(lines.join('\n'));
  opened_->show();
  fields_->hide();
}

void ScenarioPanel::clearOpenedFile() {
  opened_->hide();
  fields_->show();
}

bool ScenarioPanel::showsOpenedFile() const {
  return !opened_->isHidden();
}

QString ScenarioPanel::openedFileText() const {
  return showsOpenedFile() ? openedText_->text() : QString();
}

QWidget* ScenarioPanel::buildPresetRow() {
  auto* box = new QGroupBox(tr("Preset"), this);
  auto* row = new QHBoxLayout(box);
  preset_ = new QComboBox(box);
  preset_->setObjectName("preset");
  preset_->addItem(tr("custom"), QString());
  for (const auto& p : embeddedPresets()) {
    const QString name = QString::fromStdString(p.name);
    preset_->addItem(name, name);
    try {
      preset_->setItemData(
          preset_->count() - 1,
          QString::fromStdString(parsePreset(p.json, p.name, p.source).description),
          Qt::ToolTipRole);
    } catch (const std::exception&) {
    }
  }
  row->addWidget(preset_, 1);
  connect(preset_, &QComboBox::activated, this, [this](int index) {
    const QString name = preset_->itemData(index).toString();
    if (!name.isEmpty()) selectPreset(name);
  });
  return box;
}

QSpinBox* ScenarioPanel::sizeBox(int min, int max, const QString& tip) {
  auto* box = new QSpinBox(this);
  box->setRange(min, max);
  box->setToolTip(tr("%1 (allowed %2 to %3)").arg(tip).arg(min).arg(max));
  box->setAccelerated(true);
  box->setGroupSeparatorShown(true);
  connect(box, &QSpinBox::valueChanged, this, [this] {
    if (loading_) return;
    title_ = QStringLiteral("custom");
    preset_->setCurrentIndex(0);
    updateSummary();
    emit scenarioChanged();
  });
  return box;
}

QWidget* ScenarioPanel::buildWorkloadGroup() {
  auto* box = new QGroupBox(tr("Workload: out[n] = a[n] @ c[q[n]]"), this);
  auto* form = new QFormLayout(box);
  n_ = sizeBox(1, kMaxSize, tr("N: rows of a and entries of q"));
  m_ = sizeBox(1, kMaxSize, tr("M: matrices in c"));
  i_ = sizeBox(1, kMaxSize, tr("I: rows of each a[n]"));
  j_ = sizeBox(1, kMaxSize, tr("J: the contracted dimension"));
  k_ = sizeBox(1, kMaxSize, tr("K: columns of each c[m]"));
  batch_ = sizeBox(1, kMaxSize, tr("strategy3's batch"));
  for (auto [label, w] :
       {std::pair{"N", n_}, {"M", m_}, {"I", i_}, {"J", j_}, {"K", k_}, {"batch", batch_}}) {
    w->setObjectName(QString("size_") + label);
    form->addRow(tr(label), w);
  }
  dtype_ = new QComboBox(box);
  dtype_->setObjectName("dtype");
  dtype_->addItems({"float32", "float16", "bfloat16"});
  form->addRow(tr("dtype"), dtype_);
  connect(dtype_, &QComboBox::currentIndexChanged, this, [this] {
    updateSummary();
    emit scenarioChanged();
  });
  return box;
}

QWidget* ScenarioPanel::buildFlagsGroup() {
  auto* box = new QGroupBox(tr("Run"), this);
  auto* form = new QFormLayout(box);
  auto* grads = new QHBoxLayout;
  gradA_ = new QCheckBox(tr("a"), box);
  gradC_ = new QCheckBox(tr("c"), box);
  gradA_->setObjectName("gradA");
  gradC_->setObjectName("gradC");
  grads->addWidget(gradA_);
  grads->addWidget(gradC_);
  form->addRow(tr("requires_grad"), grads);
  backward_ = new QCheckBox(tr("run backward (dA, dC)"), box);
  backward_->setObjectName("backward");
  form->addRow(QString(), backward_);
  device_ = new QComboBox(box);
  device_->setObjectName("device");
  device_->addItem(tr("cpu (real data)"), "cpu");
  device_->addItem(tr("meta (memory only, no data)"), "meta");
  device_->addItem(tr("cuda (GPU: engine kernels, cuBLAS)"), "cuda");
  if (const kernels::CudaStatus cuda = kernels::probeCuda(); !cuda.available) {
    const int row = device_->count() - 1;
    if (auto* items = qobject_cast<QStandardItemModel*>(device_->model()))
      items->item(row)->setEnabled(false);
    device_->setItemData(row,
                         tr("CUDA is not available: %1").arg(QString::fromStdString(cuda.reason)),
                         Qt::ToolTipRole);
  }
  form->addRow(tr("device"), device_);
  deviceMemory_ = new QLineEdit(box);
  deviceMemory_->setObjectName("deviceMemory");
  deviceMemory_->setPlaceholderText(tr("unlimited (e.g. 1GiB, 80GB)"));
  deviceMemory_->setToolTip(
      tr("Capacity of the simulated device: runs above it fail with "
         "PyTorch's out-of-memory message"));
  form->addRow(tr("device memory"), deviceMemory_);
  connect(deviceMemory_, &QLineEdit::textChanged, this, &ScenarioPanel::validateDeviceMemory);
  pytorch_ = new QComboBox(box);
  pytorch_->setObjectName("pytorch");
  pytorch_->addItem(tr("2.x (today's: cuBLAS workspace counted)"), "2.x");
  pytorch_->addItem(tr("forum post's (no cuBLAS workspace)"), "forum");
  pytorch_->setToolTip(
      tr("Which PyTorch the memory model follows: PyTorch 2.x allocates each thread's cuBLAS "
         "workspace (32 MiB on sm_90) through the caching allocator at its first matmul and "
         "keeps it; the PyTorch of the forum post's table did not count it"));
  form->addRow(tr("PyTorch"), pytorch_);
  gpu_ = new QComboBox(box);
  gpu_->setObjectName("gpu");
  for (const GpuArchitecture& a : gpuArchitectures())
    gpu_->addItem(QString::fromLatin1(a.name.data(), qsizetype(a.name.size())) +
                      QStringLiteral(" (sm_%1)").arg(a.computeCapability),
                  QString::fromLatin1(a.key.data(), qsizetype(a.key.size())));
  gpu_->setToolTip(
      tr("The GPU whose architecture sizes the cuBLAS workspace and kernels' "
         "buffers in the memory model"));
  form->addRow(tr("GPU"), gpu_);
  for (QComboBox* c : {pytorch_, gpu_})
    connect(c, &QComboBox::currentIndexChanged, this, [this] {
      if (loading_) return;
      updateSummary();
      emit scenarioChanged();
    });
  auto* list = new QVBoxLayout;
  for (const auto& s : strategyRegistry()) {
    auto* check = new QCheckBox(QString::fromStdString(s.name), box);
    check->setObjectName("strategy_" + QString::fromStdString(s.name));
    check->setToolTip(QString::fromStdString(s.statement + "\n" + s.summary));
    strategies_.append(check);
    list->addWidget(check);
    connect(check, &QCheckBox::toggled, this, [this] { validateDeviceMemory(); });
  }
  form->addRow(tr("strategies"), list);
  repeats_ = new QSpinBox(box);
  repeats_->setRange(1, kMaxRepeats);
  repeats_->setToolTip(tr("Timed runs per strategy (1 to %1): the first is cold").arg(kMaxRepeats));
  form->addRow(tr("repeats"), repeats_);
  for (QCheckBox* c : {gradA_, gradC_, backward_})
    connect(c, &QCheckBox::toggled, this, [this] {
      updateSummary();
      emit scenarioChanged();
    });
  return box;
}

QWidget* ScenarioPanel::buildKernelGroup() {
  auto* box = new QGroupBox(tr("Kernel launch: C[M,N] = A[M,K] · B[K,N]"), this);
  auto* form = new QFormLayout(box);
  kernel_ = new QComboBox(box);
  kernel_->setObjectName("kernel");
  // As wide as a short name, not the longest ("... (faulty, for teaching)"), which made the
  // dock, and so the window, wider than a laptop screen. The list shows the names in full.
  kernel_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  kernel_->setMinimumContentsLength(16);
  addKernelItems(kernel_);
  kernel_->setToolTip(
      tr("Kernel variant (kernels/0*_*.h); those marked faulty are wrong on purpose, to show "
         "the simulator's diagnostics"));
  form->addRow(tr("kernel"), kernel_);
  kM_ = new QSpinBox(box);
  kK_ = new QSpinBox(box);
  kN_ = new QSpinBox(box);
  tpb_ = new QSpinBox(box);
  for (auto [label, w, max] : {std::tuple{"M", kM_, kMaxKernelSize},
                               {"K", kK_, kMaxKernelSize},
                               {"N", kN_, kMaxKernelSize},
                               {"TPB", tpb_, kMaxTpb}}) {
    w->setRange(1, max);
    w->setObjectName(QString("kernel_") + label);
    w->setToolTip(tr("%1 (allowed 1 to %2)").arg(label).arg(max));
    w->setGroupSeparatorShown(true);
    form->addRow(tr(label), w);
    connect(w, &QSpinBox::editingFinished, this, [this] {
      if (!loading_) emit kernelChanged();
    });
  }
  tpb_->setToolTip(
      tr("Threads per block along x and y: TPB x TPB threads, at most 32 "
         "(CUDA's 1024 threads per block)"));
  connect(kernel_, &QComboBox::activated, this, [this] { emit kernelChanged(); });
  return box;
}

Scenario ScenarioPanel::scenario() const {
  Scenario s;
  s.title = title_;
  Workload& w = s.config.workload;
  w.n = n_->value(), w.m = m_->value(), w.i = i_->value(), w.j = j_->value(), w.k = k_->value(),
  w.batch = batch_->value();
  w.dtype = parseDType(dtype_->currentText().toStdString());
  s.config.requiresGrad.a = gradA_->isChecked();
  s.config.requiresGrad.c = gradC_->isChecked();
  s.config.backward = backward_->isChecked();
  s.config.device = parseDeviceKind(device_->currentData().toString().toStdString());
  s.config.strategies.clear();
  for (QCheckBox* c : strategies_)
    if (c->isChecked()) s.config.strategies.push_back(c->text().toStdString());
  s.config.repeats = repeats_->value();
  const QString memory = deviceMemory_->text().trimmed();
  if (!memory.isEmpty()) {
    try {
      s.config.deviceMemoryBytes = parseByteSize(memory.toStdString(), "device memory");
    } catch (const std::exception&) {
    }
  }
  s.config.pytorch.version = parsePyTorchVersion(pytorch_->currentData().toString().toStdString());
  s.config.pytorch.gpu = gpu_->currentData().toString().toStdString();
  s.kernel = kernel_->currentData().toString();
  s.kernelM = kM_->value(), s.kernelK = kK_->value(), s.kernelN = kN_->value();
  s.tpb = tpb_->value();
  return s;
}

void ScenarioPanel::setScenario(const Scenario& s) {
  loading_ = true;
  const Workload& w = s.config.workload;
  n_->setValue(int(w.n)), m_->setValue(int(w.m)), i_->setValue(int(w.i));
  j_->setValue(int(w.j)), k_->setValue(int(w.k)), batch_->setValue(int(w.batch));
  dtype_->setCurrentText(qs(dtypeName(w.dtype)));
  gradA_->setChecked(s.config.requiresGrad.a);
  gradC_->setChecked(s.config.requiresGrad.c);
  backward_->setChecked(s.config.backward);
  device_->setCurrentIndex(std::max(0, device_->findData(qs(deviceKindName(s.config.device)))));
  for (QCheckBox* c : strategies_) {
    const std::string name = c->text().toStdString();
    c->setChecked(std::find(s.config.strategies.begin(), s.config.strategies.end(), name) !=
                  s.config.strategies.end());
  }
  repeats_->setValue(s.config.repeats);
  deviceMemory_->setText(s.config.deviceMemoryBytes ? bytesText(*s.config.deviceMemoryBytes)
                                                    : QString());
  pytorch_->setCurrentIndex(
      std::max(0, pytorch_->findData(qs(pytorchVersionName(s.config.pytorch.version)))));
  gpu_->setCurrentIndex(std::max(0, gpu_->findData(QString::fromStdString(s.config.pytorch.gpu))));
  if (const int index = kernel_->findData(s.kernel); index >= 0) kernel_->setCurrentIndex(index);
  kM_->setValue(s.kernelM), kK_->setValue(s.kernelK), kN_->setValue(s.kernelN);
  tpb_->setValue(s.tpb);
  title_ = s.title;
  const int index = preset_->findData(s.title);
  preset_->setCurrentIndex(index < 0 ? 0 : index);
  loading_ = false;
  validateDeviceMemory();
  updateSummary();
  emit scenarioChanged();
  emit kernelChanged();
}

void ScenarioPanel::setKernelLaunch(const QString& kernel, int m, int k, int n, int tpb) {
  loading_ = true;
  if (const int index = kernel_->findData(kernel); index >= 0) kernel_->setCurrentIndex(index);
  kM_->setValue(m), kK_->setValue(k), kN_->setValue(n), tpb_->setValue(tpb);
  loading_ = false;
}

bool ScenarioPanel::selectPreset(const QString& name) {
  try {
    setScenario(Scenario::fromPreset(loadPreset(name.toStdString())));
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

bool ScenarioPanel::loadPresetFile(const QString& path, QString* error) {
  QFile file(path);
  const QFileInfo info(path);
  if (!file.open(QIODevice::ReadOnly)) {
    if (error) *error = tr("%1: cannot be read: %2").arg(info.fileName(), file.errorString());
    return false;
  }
  try {
    // Messages name the file without its folder.
    const Preset p =
        parsePreset(file.readAll().toStdString(), info.completeBaseName().toStdString(),
                    info.fileName().toStdString());
    setScenario(Scenario::fromPreset(p));
    return true;
  } catch (const std::exception& e) {
    if (error) *error = QString::fromUtf8(e.what());
    return false;
  }
}

void ScenarioPanel::setRunning(bool running) {
  run_->setEnabled(!running && isValid());
  cancel_->setEnabled(running);
}

bool ScenarioPanel::isValid() const {
  return error_->isHidden();
}

void ScenarioPanel::validateDeviceMemory() {
  QString problem;
  bool memoryBad = false;
  const QString text = deviceMemory_->text().trimmed();
  if (!text.isEmpty()) {
    try {
      parseByteSize(text.toStdString(), "device memory");
    } catch (const std::exception& e) {
      problem = QString::fromUtf8(e.what());
      memoryBad = true;
    }
  }
  bool any = false;
  for (QCheckBox* c : strategies_) any = any || c->isChecked();
  if (!any) problem = tr("Choose at least one strategy.");
  deviceMemory_->setStyleSheet(memoryBad ? QStringLiteral("border: 2px solid #b00020;")
                                         : QString());
  error_->setText(problem);
  error_->setVisible(!problem.isEmpty());
  run_->setEnabled(problem.isEmpty() && !cancel_->isEnabled());
}

void ScenarioPanel::updateSummary() {
  const Workload w = scenario().config.workload;
  const int64_t gathered = w.n * w.j * w.k * elementSize(w.dtype);
  summary_->setText(tr("a %1 · c %2 · out %3 · c[q] would be %4")
                        .arg(bytesText(w.aBytes()), bytesText(w.cBytes()), bytesText(w.outBytes()),
                             bytesText(gathered)));
}

}  // namespace matmulviz::ui
