// The Kernel view's widgets: the launch fields (kernel, M, K, N, TPB with their ranges), the
// playback bar (start, back, play/pause, forward, end, step unit, speed, position) and the side
// panel of statistics and diagnostics.
#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>
#include <QSplitter>
#include <QStyle>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

#include "ui/models/kernel_stats_model.h"
#include "ui/widgets/grouped_bmm_panel.h"
#include "ui/widgets/kernel_canvas.h"
#include "ui/widgets/kernel_combo.h"
#include "ui/widgets/kernel_view.h"
#include "ui/widgets/kernel_view_controls.h"

namespace matmulviz::ui {
namespace {

QSpinBox* sizeField(const QString& name, int max, const QString& what) {
  auto* box = new QSpinBox;
  box->setRange(1, max);
  box->setAccelerated(true);
  box->setKeyboardTracking(false);
  box->setAccessibleName(name);
  box->setToolTip(QStringLiteral("%1: %2, 1..%3").arg(name, what).arg(max));
  return box;
}

QToolButton* toolButton(QStyle::StandardPixmap icon, const QString& tip) {
  auto* b = new QToolButton;
  b->setIcon(b->style()->standardIcon(icon));
  b->setToolTip(tip);
  b->setAutoRaise(true);
  return b;
}

QLabel* fieldLabel(const QString& text, QWidget* buddy) {
  auto* l = new QLabel(text);
  l->setBuddy(buddy);
  return l;
}

}  // namespace

void KernelView::buildControls() {
  using L = KernelLaunchLimits;
  Controls& c = *c_;
  c.kernel = new QComboBox;
  addKernelItems(c.kernel, /*withGrouped=*/true);
  // As wide as a short name, not the longest ("... (faulty, for teaching)"): the launch row must
  // fit a 1280 px projector in classroom mode. The list shows the names in full.
  c.kernel->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  c.kernel->setMinimumContentsLength(16);
  c.kernel->setToolTip(
      QStringLiteral("kernel variant (kernels/0*_*.h); gather_bmm is batched "
                     "and is not drawn here; grouped_bmm is drawn as its buckets and shared "
                     "tile; those marked faulty are wrong on purpose, to "
                     "show the simulator's diagnostics"));
  c.m = sizeField(QStringLiteral("M"), L::maxDim, QStringLiteral("rows of A and C"));
  c.k = sizeField(QStringLiteral("K"), L::maxDim, QStringLiteral("columns of A, rows of B"));
  c.n = sizeField(QStringLiteral("N"), L::maxDim, QStringLiteral("columns of B and C"));
  c.tpb = sizeField(QStringLiteral("TPB"), L::maxTpb,
                    QStringLiteral("threads per block along x and y"));
  c.run = new QPushButton(QStringLiteral("Simulate"));
  c.run->setToolTip(QStringLiteral("run the launch on the simulator (Enter in a field)"));
  c.status = new QLabel;
  c.status->setWordWrap(true);
  c.status->setTextInteractionFlags(Qt::TextSelectableByMouse);

  c.start = toolButton(QStyle::SP_MediaSkipBackward, QStringLiteral("to the start"));
  c.back = toolButton(QStyle::SP_MediaSeekBackward, QStringLiteral("step backward"));
  c.play = toolButton(QStyle::SP_MediaPlay, QStringLiteral("play / pause (Space)"));
  c.forward = toolButton(QStyle::SP_MediaSeekForward, QStringLiteral("step forward (Right)"));
  c.end = toolButton(QStyle::SP_MediaSkipForward, QStringLiteral("to the end of the block"));
  c.unit = new QComboBox;
  c.unit->addItems({QStringLiteral("step: one thread"), QStringLiteral("step: one k-step"),
                    QStringLiteral("step: one barrier phase")});
  c.unit->setToolTip(QStringLiteral("what one step forward runs"));
  c.speed = new QSlider(Qt::Horizontal);
  c.speed->setRange(0, 100);
  c.speed->setToolTip(QStringLiteral("playback speed, steps per second (log scale)"));
  c.speed->setMaximumWidth(140);
  c.speedLabel = new QLabel;
  c.position = new QSlider(Qt::Horizontal);
  c.position->setToolTip(QStringLiteral("position in the traced block's execution"));
  c.positionLabel = new QLabel;
  c.positionLabel->setMinimumWidth(110);

  c.stats = new QTableView;
  c.stats->setModel(stats_);
  c.diagnostics = new QTableView;
  c.diagnostics->setObjectName(QStringLiteral("diagnostics"));
  c.diagnostics->setModel(diagnostics_);
  for (QTableView* t : {c.stats, c.diagnostics}) {
    t->verticalHeader()->hide();
    t->horizontalHeader()->setStretchLastSection(true);
    t->setSelectionBehavior(QAbstractItemView::SelectRows);
    t->setWordWrap(false);
    t->setAlternatingRowColors(true);
    t->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  }
  c.summary = new QLabel;
  c.summary->setWordWrap(true);
  c.summary->setMinimumHeight(3 * c.summary->fontMetrics().lineSpacing());
  c.summary->setAlignment(Qt::AlignLeft | Qt::AlignTop);
  c.diagnosticsLabel = new QLabel(QStringLiteral("Diagnostics"));
}

void KernelView::buildLayout() {
  Controls& c = *c_;
  auto* launchRow = new QHBoxLayout;
  launchRow->addWidget(fieldLabel(QStringLiteral("&Kernel"), c.kernel));
  launchRow->addWidget(c.kernel);
  const std::pair<const char*, QSpinBox*> fields[] = {
      {"&M", c.m}, {"K", c.k}, {"&N", c.n}, {"&TPB", c.tpb}};
  for (const auto& [name, box] : fields) {
    launchRow->addSpacing(8);
    launchRow->addWidget(fieldLabel(QLatin1String(name), box));
    launchRow->addWidget(box);
  }
  auto* ranges = new QLabel(QStringLiteral("(M, K, N: 1..%1; TPB: 1..%2)")
                                .arg(KernelLaunchLimits::maxDim)
                                .arg(KernelLaunchLimits::maxTpb));
  ranges->setEnabled(false);
  launchRow->addWidget(c.run);
  launchRow->addStretch(1);
  // The ranges and the launch's status on a row of their own: beside the fields they made the
  // window 1684 px wide in classroom mode, or wrapped into four lines that took the canvas's
  // height on a 1280x720 projector.
  auto* statusRow = new QHBoxLayout;
  statusRow->addWidget(ranges);
  statusRow->addWidget(c.status, 1);

  auto* playRow = new QHBoxLayout;
  for (QWidget* w : std::initializer_list<QWidget*>{c.start, c.back, c.play, c.forward, c.end,
                                                    c.unit, c.speed, c.speedLabel}) {
    playRow->addWidget(w);
  }
  playRow->addWidget(c.position, 1);
  playRow->addWidget(c.positionLabel);

  auto* side = new QWidget;
  auto* sideLayout = new QVBoxLayout(side);
  sideLayout->setContentsMargins(0, 0, 0, 0);
  sideLayout->addWidget(c.summary);
  sideLayout->addWidget(c.stats, 3);
  sideLayout->addWidget(c.diagnosticsLabel);
  sideLayout->addWidget(c.diagnostics, 1);

  c.splitter = new QSplitter(Qt::Horizontal);
  c.splitter->addWidget(canvas_);
  c.splitter->addWidget(side);
  c.splitter->setStretchFactor(0, 4);
  c.splitter->setStretchFactor(1, 1);
  c.splitter->setSizes({1200, 380});

  auto* animation = new QWidget;
  auto* animationLayout = new QVBoxLayout(animation);
  animationLayout->setContentsMargins(0, 0, 0, 0);
  animationLayout->addLayout(statusRow);
  animationLayout->addLayout(playRow);
  animationLayout->addWidget(c.splitter, 1);
  c.pages = new QStackedWidget;
  c.pages->addWidget(animation);
  c.pages->addWidget(grouped_);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(launchRow);
  layout->addWidget(c.pages, 1);
}

}  // namespace matmulviz::ui
