#include "ui/models/kernel_launch_model.h"

#include <algorithm>
#include <cmath>

namespace matmulviz::ui {

KernelLaunchModel::KernelLaunchModel(QObject* parent) : QObject(parent) {
  timer_.setInterval(16);
  timer_.setTimerType(Qt::PreciseTimer);
  connect(&timer_, &QTimer::timeout, this, &KernelLaunchModel::onTick);
}

void KernelLaunchModel::setResult(std::shared_ptr<const KernelLaunchResult> result) {
  setTimeline(KernelTimeline(std::move(result)));
}

void KernelLaunchModel::setTimeline(KernelTimeline timeline) {
  pause();
  timeline_ = std::move(timeline);
  step_ = 0;
  followedThread_ = -1;
  products_.clear();
  const auto followed = followed_;
  followed_.reset();
  emit launchChanged();
  if (!followed || !followCell(followed->first, followed->second)) {
    emit followChanged();
    setStep(0, true);
  }
}

void KernelLaunchModel::setStepUnit(KernelStepUnit unit) {
  if (unit == unit_) return;
  const std::int64_t done = executed();
  unit_ = unit;
  emit unitChanged();
  setStep(timeline_.stepAt(unit_, done), true);
}

void KernelLaunchModel::seek(std::int64_t step) {
  setStep(step, false);
}

void KernelLaunchModel::setStep(std::int64_t step, bool force) {
  step = std::clamp<std::int64_t>(step, 0, std::max<std::int64_t>(0, stepCount() - 1));
  if (step == step_ && !force) return;
  step_ = step;
  emit stepChanged(step_);
  emit narrationChanged(narration());
}

void KernelLaunchModel::play() {
  if (!hasLaunch() || playing()) return;
  if (step_ >= stepCount() - 1) setStep(0, false);  // replay from the start
  carry_ = 0;
  clock_.start();
  timer_.start();
  emit playingChanged(true);
}

void KernelLaunchModel::pause() {
  if (!playing()) return;
  timer_.stop();
  emit playingChanged(false);
}

void KernelLaunchModel::setSpeed(double stepsPerSecond) {
  speed_ = std::clamp(stepsPerSecond, 0.5, 100000.0);
}

void KernelLaunchModel::onTick() {
  carry_ += speed_ * static_cast<double>(clock_.restart()) / 1000.0;
  const double whole = std::floor(carry_);
  carry_ -= whole;
  if (whole >= 1) setStep(step_ + static_cast<std::int64_t>(whole), false);
  if (step_ >= stepCount() - 1) pause();
}

std::uint64_t KernelLaunchModel::blockOfCell(std::int64_t row, std::int64_t col) const {
  if (!hasLaunch()) return 0;
  const KernelGeometry& g = result()->geometry;
  const KernelGeometry::BlockThread bt = g.at(row, col);
  return g.linearBlock(bt.bx, bt.by);
}

bool KernelLaunchModel::followCell(std::int64_t row, std::int64_t col) {
  if (!hasLaunch()) return false;
  const KernelGeometry& g = result()->geometry;
  if (row < 0 || col < 0 || row >= g.planeRows() || col >= g.planeCols()) return false;
  if (blockOfCell(row, col) != result()->tracedBlock) return false;
  const KernelGeometry::BlockThread bt = g.at(row, col);
  followed_ = std::make_pair(row, col);
  followedThread_ = bt.ty * g.tpb + bt.tx;
  products_ = timeline_.productsOf(followedThread_);
  emit followChanged();
  const std::int64_t first = timeline_.threadFirstAtom(followedThread_);
  setStep(first < 0 ? 0 : timeline_.stepAt(unit_, first + 1), true);
  return true;
}

void KernelLaunchModel::clearFollow() {
  followed_.reset();
  followedThread_ = -1;
  products_.clear();
  emit followChanged();
}

std::size_t KernelLaunchModel::followedProductsDone() const {
  const std::int64_t done = executed();
  return static_cast<std::size_t>(
      std::lower_bound(products_.begin(), products_.end(), done,
                       [](const KernelProduct& p, std::int64_t e) { return p.atom < e; }) -
      products_.begin());
}

const KernelAtom* KernelLaunchModel::currentAtom() const {
  const std::int64_t done = executed();
  return done > 0 ? &timeline_.atoms()[std::size_t(done - 1)] : nullptr;
}

int KernelLaunchModel::currentPhase() const {
  const KernelAtom* atom = currentAtom();
  return atom ? atom->phase : 0;
}

}  // namespace matmulviz::ui
