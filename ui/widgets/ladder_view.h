#pragma once
// The lesson's speed ladder in the Kernel view (the fast.ai lesson): the same C = A @ B timed as a
// simulated per-thread launch, a plain loop, einsum, BLAS and, where a GPU answers, the CUDA
// kernels and cuBLAS (kernels/ladder.h), on a worker thread with Cancel, charted as bars on a
// log axis with each rung's speed-up over the one before.

#include "kernels/ladder.h"

#include <QFutureWatcher>
#include <QWidget>

#include <atomic>
#include <memory>

class QLabel;
class QPushButton;

namespace matmulviz::ui {

class LadderChart;

class LadderView : public QWidget {
  Q_OBJECT
 public:
  explicit LadderView(QWidget* parent = nullptr);
  ~LadderView() override;  ///< cancels and waits for a ladder in flight

  /// Runs the ladder for C[m, n] = A[m, k] @ B[k, n] with TPB `tpb` (one repeat per rung).
  void run(int m, int k, int n, int tpb);
  void cancel();
  bool isRunning() const { return running_; }
  LadderChart* chart() const { return chart_; }
  void setPresentationMode(bool on);

 signals:
  /// The Run button was pressed: the owner calls run() with the current sizes.
  void runRequested();
  void finished();

 private:
  void onFinished();

  LadderChart* chart_ = nullptr;
  QLabel* status_ = nullptr;
  QPushButton* run_ = nullptr;
  QPushButton* cancel_ = nullptr;
  QFutureWatcher<std::shared_ptr<const kernels::LadderReport>>* watcher_ = nullptr;
  std::atomic<bool> cancelFlag_{false};
  bool running_ = false;  ///< from run() until its report is charted
};

}  // namespace matmulviz::ui
