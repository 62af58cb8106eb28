#pragma once
// The Kernel view (issue 4, view 1): a simulated launch animated on the classic A/B/C diagram,
// with its controls, narration, statistics and diagnostics. The main window embeds it and wires
// its shortcuts (Space: togglePlay, Right: stepForward).
//
//   auto* view = new KernelView(window);
//   view->setLaunch({"smem_tiled", 40, 37, 33, 8});   // simulates on a worker
//   connect(view, &KernelView::launchReady, view, &KernelView::play);

#include <QFutureWatcher>
#include <QImage>
#include <QWidget>
#include <memory>
#include <optional>

#include "ui/models/kernel_launch.h"
#include "ui/models/kernel_launch_model.h"

class QComboBox;
class QLabel;
class QPushButton;
class QSlider;
class QSpinBox;
class QSplitter;
class QTableView;
class QToolButton;

namespace matmulviz::ui {

class GroupedBmmPanel;
class KernelCanvas;
class KernelStatsModel;
class KernelDiagnosticsModel;

/// What the worker hands back: the result, or the message of what went wrong.
struct KernelSimulationOutcome {
  std::shared_ptr<const KernelLaunchResult> result;
  std::shared_ptr<KernelTimeline> timeline;  ///< built on the worker too
  QString error;
};

class KernelView : public QWidget {
  Q_OBJECT

 public:
  explicit KernelView(QWidget* parent = nullptr);
  ~KernelView() override;

  /// (Re)simulates `spec` on a worker thread, tracing block 0 (or the block of the selected
  /// cell when only the seed changed). The previous frame stays on screen meanwhile; the GUI
  /// thread only checks the spec. Emits launchReady() when the new launch is shown, or
  /// launchFailed(message) for a spec the view refuses or a simulation that throws. The
  /// fields of the control bar follow `spec`.
  void setLaunch(const KernelLaunchSpec& spec);
  /// The launch last asked for (shown, or still simulating).
  const KernelLaunchSpec& launch() const;
  /// True while a simulation runs on the worker.
  bool isSimulating() const;

  /// What one step forward advances: one thread's run (up to its exit or a barrier), one
  /// iteration of the k-loop (or one staging of a tile), or one barrier phase of the block.
  enum class StepUnit { Thread, KStep, BarrierPhase };
  void setStepUnit(StepUnit unit);
  StepUnit stepUnit() const;

  void play();
  void pause();
  void togglePlay();
  void stepForward();
  void stepBackward();
  /// Step 0 is the block before any thread ran; stepCount() - 1 is the end of the block.
  void seek(qint64 step);
  void seekToEnd();
  /// Playback speed in steps of the current unit per second (clamped to 0.5..100000).
  void setSpeed(double stepsPerSecond);
  double speed() const;

  qint64 stepCount() const;
  qint64 currentStep() const;
  bool isPlaying() const;

  /// Follows the thread that owns C[row, col] (any plane position, idle threads included):
  /// re-traces its block on the worker when it is not the one traced, then seeks to the
  /// thread's first step so that its k-loop plays next.
  void selectCell(int row, int col);
  /// The narration line of the current step.
  QString narration() const;

  /// Classroom: larger fonts, high-contrast palette, big narration line.
  void setPresentationMode(bool on);
  bool presentationMode() const;

  /// Renders the canvas (diagram, tiles, legend; no controls) at `size`, as shown now.
  QImage renderFrame(QSize size);

  /// The model behind the animation, for tests and for the main window's status bar.
  const KernelLaunchModel& model() const;
  /// The canvas, for tests that click cells (KernelCanvas::cellCenter).
  KernelCanvas* canvas() const;
  /// Kernel 08's picture (bucketing and shared tile), shown instead of the A/B/C animation while
  /// grouped_bmm is the chosen kernel.
  GroupedBmmPanel* groupedPanel() const;
  /// Whether grouped_bmm's picture is the page shown.
  bool showsGroupedBmm() const;

 signals:
  void launchReady();
  void launchFailed(const QString& message);
  void narrationChanged(const QString& narration);
  void stepChanged(qint64 step);

 private:
  struct Controls;
  void buildControls();
  void buildLayout();
  void connectControls();
  void startSimulation(const KernelLaunchSpec& spec, std::uint64_t tracedBlock);
  void onSimulationFinished();
  void syncFieldsTo(const KernelLaunchSpec& spec);
  /// Shows grouped_bmm's picture (true) or the A/B/C animation; the launch row's sizes belong
  /// to the animation and are disabled under the picture, which has its own.
  void showGroupedPage(bool grouped);
  void syncPlaybackControls();
  KernelLaunchSpec specFromFields() const;

  KernelLaunchSpec spec_;
  std::unique_ptr<KernelLaunchModel> model_;
  std::unique_ptr<Controls> c_;
  KernelCanvas* canvas_ = nullptr;
  GroupedBmmPanel* grouped_ = nullptr;
  KernelStatsModel* stats_ = nullptr;
  KernelDiagnosticsModel* diagnostics_ = nullptr;
  QFutureWatcher<KernelSimulationOutcome>* watcher_ = nullptr;
  /// A simulation asked for while one runs: started when it finishes (only the latest).
  struct Pending {
    KernelLaunchSpec spec;
    std::uint64_t tracedBlock = 0;
  };
  std::optional<Pending> pending_;
  std::optional<std::pair<int, int>> cellToFollow_;  ///< selected before its block was traced
  bool presentation_ = false;
  bool simulating_ = false;  ///< from startSimulation until its outcome is shown
  bool syncing_ = false;     ///< fields being set from code, not by the user
};

}  // namespace matmulviz::ui
