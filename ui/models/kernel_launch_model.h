#pragma once
// The state of the Kernel view's animation, GUI-free: the launch shown, its timeline, the
// current step in the chosen unit, playback (a QTimer), and the followed thread with the
// elements it multiplied so far. The view draws what this model says; tests drive it directly.
//
//   KernelLaunchModel model;
//   model.setResult(simulateKernelLaunch({"naive", 5, 784, 10, 16}, 0));
//   model.followCell(3, 7);   // shows thread (3,7)'s first k-step
//   model.stepForward();      // narration(): "... C[3,7] += A[3,1] * B[1,7], k = 1 of 784"

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "ui/models/kernel_launch.h"
#include "ui/models/kernel_timeline.h"

namespace matmulviz::ui {

class KernelLaunchModel : public QObject {
  Q_OBJECT

 public:
  explicit KernelLaunchModel(QObject* parent = nullptr);

  /// Shows `result` (null clears). Keeps the unit and speed; stops playback. When the followed
  /// cell's block is the one traced, keeps following it and seeks to its first step; else step 0.
  void setResult(std::shared_ptr<const KernelLaunchResult> result);
  /// As setResult(timeline.result()) with the timeline already built (on a worker thread: a
  /// block's timeline takes milliseconds per million trace events).
  void setTimeline(KernelTimeline timeline);
  const KernelLaunchResult* result() const { return timeline_.result(); }
  std::shared_ptr<const KernelLaunchResult> sharedResult() const {
    return timeline_.sharedResult();
  }
  const KernelTimeline& timeline() const { return timeline_; }
  bool hasLaunch() const { return result() != nullptr; }

  void setStepUnit(KernelStepUnit unit);  ///< keeps the position (the step holding it)
  KernelStepUnit stepUnit() const { return unit_; }
  std::int64_t stepCount() const { return timeline_.stepCount(unit_); }
  std::int64_t currentStep() const { return step_; }
  /// Atoms of the traced block executed at the current step.
  std::int64_t executed() const { return timeline_.executedAt(unit_, step_); }
  void seek(std::int64_t step);  ///< clamped to 0..stepCount()-1
  void stepForward() { seek(step_ + 1); }
  void stepBackward() { seek(step_ - 1); }
  void seekToEnd() { seek(stepCount() - 1); }

  /// Playback: advances speed() steps per second (of the current unit) until the end.
  void play();
  void pause();
  void togglePlay() { playing() ? pause() : play(); }
  bool playing() const { return timer_.isActive(); }
  void setSpeed(double stepsPerSecond);  ///< clamped to 0.5..100000
  double speed() const { return speed_; }

  /// Follows the thread at plane position (row, col) (idle threads too). Returns false (and
  /// remembers nothing) when that thread is not in the traced block: re-simulate with
  /// blockOfCell() traced, then call again. On success seeks to the step that runs the thread's
  /// first atom (its first k-step, staging or idle exit), so the narration is about it.
  bool followCell(std::int64_t row, std::int64_t col);
  void clearFollow();
  /// Linear block id of the thread at (row, col); the caller checks the position is on the plane.
  std::uint64_t blockOfCell(std::int64_t row, std::int64_t col) const;
  std::optional<std::pair<std::int64_t, std::int64_t>> followedCell() const { return followed_; }
  int followedThread() const { return followedThread_; }
  /// The followed thread's multiply-adds from the trace, in order (all of them).
  const std::vector<KernelProduct>& followedProducts() const { return products_; }
  /// How many of followedProducts() have run at the current step.
  std::size_t followedProductsDone() const;

  /// The atom that ran last (null at step 0), its thread and barrier phase.
  const KernelAtom* currentAtom() const;
  /// Barrier phase being shown: the phase of the last atom run (0 at step 0).
  int currentPhase() const;
  QString narration() const { return timeline_.narrate(executed()); }

 signals:
  void launchChanged();
  void stepChanged(qint64 step);
  void narrationChanged(const QString& narration);
  void playingChanged(bool playing);
  void followChanged();
  void unitChanged();

 private:
  void onTick();
  void setStep(std::int64_t step, bool force);

  KernelTimeline timeline_;
  KernelStepUnit unit_ = KernelStepUnit::KStep;
  std::int64_t step_ = 0;
  double speed_ = 60;
  double carry_ = 0;  ///< fraction of a step owed by the timer
  QTimer timer_;
  QElapsedTimer clock_;
  std::optional<std::pair<std::int64_t, std::int64_t>> followed_;
  int followedThread_ = -1;
  std::vector<KernelProduct> products_;
};

}  // namespace matmulviz::ui
