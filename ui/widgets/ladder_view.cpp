#include "ui/widgets/ladder_view.h"

#include "ui/charts/ladder_chart.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QMetaObject>
#include <QPushButton>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

namespace matmulviz::ui {
namespace {
constexpr int kChartMinHeight = 160;  ///< px: four bars and their labels in normal fonts
}  // namespace

LadderView::LadderView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* row = new QHBoxLayout;
  run_ = new QPushButton(tr("Run the speed ladder"));
  run_->setObjectName("ladderRun");
  run_->setToolTip(
      tr("Time the launch's C = A @ B as a simulated launch, a loop, einsum, BLAS "
         "and (with a GPU) the CUDA kernels and cuBLAS"));
  cancel_ = new QPushButton(tr("Cancel"));
  cancel_->setEnabled(false);
  status_ =
      new QLabel(tr("The same product, the slow way first: each rung's speed-up over the "
                    "one before."));
  status_->setObjectName("ladderStatus");
  status_->setWordWrap(true);  // a long reason (no GPU: why) wraps instead of widening the window
  status_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  row->addWidget(run_);
  row->addWidget(cancel_);
  row->addWidget(status_, 1);
  layout->addLayout(row);
  chart_ = new LadderChart;
  chart_->setObjectName("ladderChart");
  chart_->setMinimumHeight(kChartMinHeight);
  layout->addWidget(chart_, 1);
  watcher_ = new QFutureWatcher<std::shared_ptr<const kernels::LadderReport>>(this);
  connect(watcher_, &QFutureWatcherBase::finished, this, &LadderView::onFinished);
  connect(run_, &QPushButton::clicked, this, &LadderView::runRequested);
  connect(cancel_, &QPushButton::clicked, this, &LadderView::cancel);
}

LadderView::~LadderView() {
  cancelFlag_ = true;
  watcher_->waitForFinished();
}

void LadderView::run(int m, int k, int n, int tpb) {
  if (watcher_->isRunning()) return;
  kernels::LadderOptions options;
  options.M = m, options.K = k, options.N = n, options.tpb = tpb;
  options.repeats = 1;
  try {
    kernels::validateLadder(options);
  } catch (const std::exception& e) {
    status_->setText(QString::fromUtf8(e.what()));
    return;
  }
  cancelFlag_ = false;
  running_ = true;
  run_->setEnabled(false);
  cancel_->setEnabled(true);
  status_->setText(tr("Running the ladder for C [%1 x %2], K = %3…").arg(m).arg(n).arg(k));
  auto progress = [this](std::size_t index, std::size_t count, const kernels::LadderRung& rung) {
    const QString text = tr("rung %1 of %2: %3 %4")
                             .arg(index + 1)
                             .arg(count)
                             .arg(QString::fromStdString(rung.name),
                                  rung.ok ? tr("done") : QString::fromStdString(rung.skipped));
    QMetaObject::invokeMethod(status_, [this, text] { status_->setText(text); });
  };
  watcher_->setFuture(QtConcurrent::run([options, progress, this] {
    return std::make_shared<const kernels::LadderReport>(
        kernels::runLadder(options, progress, &cancelFlag_));
  }));
}

void LadderView::cancel() {
  cancelFlag_ = true;
}

void LadderView::onFinished() {
  running_ = false;
  run_->setEnabled(true);
  cancel_->setEnabled(false);
  try {
    const auto report = watcher_->result();
    QVector<LadderChart::Rung> rungs;
    for (const auto& r : report->rungs) {
      if (!r.ok && r.skipped.rfind("CUDA", 0) == 0) continue;  // no GPU: said once below
      rungs.append({QString::fromStdString(r.name), r.seconds, r.speedup, r.ok,
                    QString::fromStdString(r.ok ? r.what : r.skipped)});
    }
    chart_->setRungs(rungs);
    status_->setText(tr("C [%1 x %2], K = %3; GPU rungs: %4")
                         .arg(report->options.M)
                         .arg(report->options.N)
                         .arg(report->options.K)
                         .arg(QString::fromStdString(report->gpu)));
  } catch (const std::exception& e) {
    status_->setText(QString::fromUtf8(e.what()));
  }
  emit finished();
}

void LadderView::setPresentationMode(bool on) {
  chart_->setPresentationMode(on);
  // Below the Kernel view in large fonts, the tab must still fit a 1280x720 projector; classroom
  // mode gives the ladder a quarter of the tab anyway.
  chart_->setMinimumHeight(on ? kChartMinHeight * 9 / 16 : kChartMinHeight);
}

}  // namespace matmulviz::ui
