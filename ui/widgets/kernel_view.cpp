#include "ui/widgets/kernel_view.h"

#include <QSignalBlocker>
#include <QtConcurrent/QtConcurrentRun>
#include <cmath>
#include <exception>

#include "ui/models/kernel_stats_model.h"
#include "ui/widgets/grouped_bmm_panel.h"
#include "ui/widgets/kernel_canvas.h"
#include "ui/widgets/kernel_view_controls.h"

namespace matmulviz::ui {
namespace {

double speedOfSlider(int value) {
  return 0.5 * std::pow(10.0, value / 20.0);
}
int sliderOfSpeed(double speed) {
  return int(std::lround(20.0 * std::log10(speed / 0.5)));
}

KernelStepUnit toModel(KernelView::StepUnit u) {
  return u == KernelView::StepUnit::Thread  ? KernelStepUnit::Thread
         : u == KernelView::StepUnit::KStep ? KernelStepUnit::KStep
                                            : KernelStepUnit::BarrierPhase;
}

KernelSimulationOutcome simulate(const KernelLaunchSpec& spec, std::uint64_t block) {
  KernelSimulationOutcome out;
  try {
    out.result = simulateKernelLaunch(spec, block);
    out.timeline = std::make_shared<KernelTimeline>(out.result);
  } catch (const std::bad_alloc&) {
    out.error = QStringLiteral("out of memory simulating this launch; try smaller sizes");
  } catch (const std::exception& e) {
    out.error = QString::fromStdString(e.what());
  }
  return out;
}

}  // namespace

KernelView::KernelView(QWidget* parent)
    : QWidget(parent),
      model_(std::make_unique<KernelLaunchModel>()),
      c_(std::make_unique<Controls>()) {
  stats_ = new KernelStatsModel(this);
  diagnostics_ = new KernelDiagnosticsModel(this);
  canvas_ = new KernelCanvas(model_.get());
  grouped_ = new GroupedBmmPanel;
  watcher_ = new QFutureWatcher<KernelSimulationOutcome>(this);
  buildControls();
  buildLayout();
  connectControls();
  syncFieldsTo(spec_);
  c_->speed->setValue(sliderOfSpeed(model_->speed()));
  syncPlaybackControls();
}

KernelView::~KernelView() {
  pending_.reset();
  watcher_->disconnect(this);
  watcher_->waitForFinished();  // the worker only touches its own copies
}

void KernelView::connectControls() {
  Controls& c = *c_;
  connect(watcher_, &QFutureWatcherBase::finished, this, &KernelView::onSimulationFinished);
  connect(canvas_, &KernelCanvas::cellClicked, this, &KernelView::selectCell);
  connect(model_.get(), &KernelLaunchModel::stepChanged, this, [this](qint64 step) {
    syncPlaybackControls();
    emit stepChanged(step);
  });
  connect(model_.get(), &KernelLaunchModel::narrationChanged, this, &KernelView::narrationChanged);
  connect(model_.get(), &KernelLaunchModel::playingChanged, this,
          [this] { syncPlaybackControls(); });
  const auto apply = [this] {
    const KernelLaunchSpec asked = specFromFields();
    if (syncing_) return;
    if (asked.kernel == QLatin1String(kGroupedKernel)) {
      showGroupedPage(true);
      return;
    }
    if (showsGroupedBmm() || !(asked == spec_ && model_->hasLaunch())) setLaunch(asked);
  };
  connect(c.run, &QPushButton::clicked, this, [this] { setLaunch(specFromFields()); });
  connect(c.kernel, &QComboBox::currentIndexChanged, this, apply);
  for (QSpinBox* box : {c.m, c.k, c.n, c.tpb})
    connect(box, &QSpinBox::editingFinished, this, apply);
  connect(c.start, &QToolButton::clicked, this, [this] { seek(0); });
  connect(c.back, &QToolButton::clicked, this, &KernelView::stepBackward);
  connect(c.play, &QToolButton::clicked, this, &KernelView::togglePlay);
  connect(c.forward, &QToolButton::clicked, this, &KernelView::stepForward);
  connect(c.end, &QToolButton::clicked, this, &KernelView::seekToEnd);
  connect(c.unit, &QComboBox::currentIndexChanged, this,
          [this](int i) { setStepUnit(static_cast<StepUnit>(i)); });
  connect(c.speed, &QSlider::valueChanged, this, [this](int v) {
    model_->setSpeed(speedOfSlider(v));
    c_->speedLabel->setText(QStringLiteral("%1 steps/s").arg(model_->speed(), 0, 'g', 3));
  });
  connect(c.position, &QSlider::valueChanged, this, [this](int v) {
    if (!syncing_) seek(v);
  });
}

void KernelView::setLaunch(const KernelLaunchSpec& spec) {
  if (const QString error = checkKernelLaunch(spec); !error.isEmpty()) {
    c_->status->setText(
        QStringLiteral("<span style='color:#b00000'>%1</span>").arg(error.toHtmlEscaped()));
    syncFieldsTo(spec_);
    emit launchFailed(error);
    return;
  }
  showGroupedPage(false);
  spec_ = spec;
  syncFieldsTo(spec_);
  cellToFollow_.reset();
  startSimulation(spec_, 0);
}

const KernelLaunchSpec& KernelView::launch() const {
  return spec_;
}

bool KernelView::isSimulating() const {
  return simulating_;
}

void KernelView::startSimulation(const KernelLaunchSpec& spec, std::uint64_t tracedBlock) {
  const QString what = tracedBlock == 0 ? QStringLiteral("Simulating %1 %2 x %3 x %4, TPB %5 ...")
                                              .arg(spec.kernel)
                                              .arg(spec.m)
                                              .arg(spec.k)
                                              .arg(spec.n)
                                              .arg(spec.tpb)
                                        : QStringLiteral("Tracing block %1 ...").arg(tracedBlock);
  canvas_->setBusyText(what);
  c_->status->setText(what);
  simulating_ = true;
  if (watcher_->isRunning()) {
    pending_ = Pending{spec, tracedBlock};
    return;
  }
  watcher_->setFuture(QtConcurrent::run(simulate, spec, tracedBlock));
}

void KernelView::onSimulationFinished() {
  const KernelSimulationOutcome outcome = watcher_->result();
  if (pending_) {
    const Pending next = *pending_;
    pending_.reset();
    watcher_->setFuture(QtConcurrent::run(simulate, next.spec, next.tracedBlock));
    return;
  }
  simulating_ = false;  // until the watcher's finished() is handled here, the launch is not shown
  canvas_->setBusyText({});
  if (!outcome.result) {
    c_->status->setText(
        QStringLiteral("<span style='color:#b00000'>%1</span>").arg(outcome.error.toHtmlEscaped()));
    emit launchFailed(outcome.error);
    return;
  }
  const sim::LaunchStats& s = outcome.result->run.report.stats;
  c_->status->setText(QStringLiteral("simulated %L1 threads in %2 s")
                          .arg(qulonglong(s.threads))
                          .arg(s.elapsedS, 0, 'f', 2));
  c_->summary->setText(
      QStringLiteral("<b>%1</b>: %2")
          .arg(outcome.result->file.toHtmlEscaped(), outcome.result->summary.toHtmlEscaped()));
  stats_->setResult(outcome.result);
  diagnostics_->setResult(outcome.result);
  const std::uint64_t found = outcome.result->run.report.diagnosticCounts.total();
  c_->diagnosticsLabel->setText(found == 0 ? QStringLiteral("Diagnostics: none")
                                           : QStringLiteral("Diagnostics: %1 (first %2 listed)")
                                                 .arg(found)
                                                 .arg(diagnostics_->rowCount()));
  model_->setTimeline(std::move(*outcome.timeline));
  if (const auto cell = cellToFollow_) {
    cellToFollow_.reset();
    if (!model_->followCell(cell->first, cell->second)) selectCell(cell->first, cell->second);
  }
  syncPlaybackControls();
  emit narrationChanged(narration());
  emit launchReady();
}

void KernelView::syncFieldsTo(const KernelLaunchSpec& spec) {
  syncing_ = true;
  if (const int index = c_->kernel->findData(spec.kernel); index >= 0)
    c_->kernel->setCurrentIndex(index);
  c_->m->setValue(spec.m);
  c_->k->setValue(spec.k);
  c_->n->setValue(spec.n);
  c_->tpb->setValue(spec.tpb);
  syncing_ = false;
}

KernelLaunchSpec KernelView::specFromFields() const {
  KernelLaunchSpec s = spec_;
  s.kernel = c_->kernel->currentData().toString();
  s.m = c_->m->value();
  s.k = c_->k->value();
  s.n = c_->n->value();
  s.tpb = c_->tpb->value();
  return s;
}

void KernelView::syncPlaybackControls() {
  syncing_ = true;
  const qint64 count = model_->stepCount();
  c_->position->setRange(0, int(std::max<qint64>(0, count - 1)));
  c_->position->setValue(int(model_->currentStep()));
  c_->position->setEnabled(count > 1);
  c_->positionLabel->setText(
      QStringLiteral("%L1 / %L2").arg(model_->currentStep()).arg(std::max<qint64>(0, count - 1)));
  c_->play->setIcon(
      style()->standardIcon(model_->playing() ? QStyle::SP_MediaPause : QStyle::SP_MediaPlay));
  syncing_ = false;
}

void KernelView::setStepUnit(StepUnit unit) {
  model_->setStepUnit(toModel(unit));
  const QSignalBlocker block(c_->unit);
  c_->unit->setCurrentIndex(static_cast<int>(unit));
  syncPlaybackControls();
}

KernelView::StepUnit KernelView::stepUnit() const {
  const KernelStepUnit u = model_->stepUnit();
  return u == KernelStepUnit::Thread  ? StepUnit::Thread
         : u == KernelStepUnit::KStep ? StepUnit::KStep
                                      : StepUnit::BarrierPhase;
}

void KernelView::play() {
  model_->play();
}
void KernelView::pause() {
  model_->pause();
}
void KernelView::togglePlay() {
  model_->togglePlay();
}
void KernelView::stepForward() {
  model_->stepForward();
}
void KernelView::stepBackward() {
  model_->stepBackward();
}
void KernelView::seek(qint64 step) {
  model_->seek(step);
}
void KernelView::seekToEnd() {
  model_->seekToEnd();
}
double KernelView::speed() const {
  return model_->speed();
}
qint64 KernelView::stepCount() const {
  return model_->stepCount();
}
qint64 KernelView::currentStep() const {
  return model_->currentStep();
}
bool KernelView::isPlaying() const {
  return model_->playing();
}
QString KernelView::narration() const {
  return model_->narration();
}
const KernelLaunchModel& KernelView::model() const {
  return *model_;
}
KernelCanvas* KernelView::canvas() const {
  return canvas_;
}
bool KernelView::presentationMode() const {
  return presentation_;
}

void KernelView::setSpeed(double stepsPerSecond) {
  model_->setSpeed(stepsPerSecond);
  const QSignalBlocker block(c_->speed);
  c_->speed->setValue(sliderOfSpeed(model_->speed()));
  c_->speedLabel->setText(QStringLiteral("%1 steps/s").arg(model_->speed(), 0, 'g', 3));
}

void KernelView::selectCell(int row, int col) {
  if (!model_->hasLaunch() || isSimulating()) {
    cellToFollow_ = std::make_pair(row, col);
    return;
  }
  if (model_->followCell(row, col)) return;
  const KernelGeometry& g = model_->result()->geometry;
  if (row < 0 || col < 0 || row >= g.planeRows() || col >= g.planeCols()) return;
  cellToFollow_ = std::make_pair(row, col);
  startSimulation(spec_, model_->blockOfCell(row, col));
}

void KernelView::setPresentationMode(bool on) {
  presentation_ = on;
  canvas_->setPresentationMode(on);
  QFont f = font();
  f.setPointSizeF(on ? QFont().pointSizeF() * 1.35 : QFont().pointSizeF());
  for (QWidget* w : findChildren<QWidget*>()) {
    if (w != canvas_) w->setFont(f);
  }
}

GroupedBmmPanel* KernelView::groupedPanel() const {
  return grouped_;
}

bool KernelView::showsGroupedBmm() const {
  return c_->pages->currentWidget() == grouped_;
}

void KernelView::showGroupedPage(bool grouped) {
  c_->pages->setCurrentIndex(grouped ? 1 : 0);
  for (QWidget* w : std::initializer_list<QWidget*>{c_->m, c_->k, c_->n, c_->tpb, c_->run})
    w->setEnabled(!grouped);  // grouped_bmm's own sizes are on its page
  if (grouped) {
    syncing_ = true;
    c_->kernel->setCurrentIndex(c_->kernel->findData(QLatin1String(kGroupedKernel)));
    syncing_ = false;
  }
}

QImage KernelView::renderFrame(QSize size) {
  return canvas_->renderImage(size);
}

}  // namespace matmulviz::ui
