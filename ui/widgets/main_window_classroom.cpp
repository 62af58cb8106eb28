// Classroom mode and the preset lessons of the main window (see main_window.h).
#include "ui/widgets/budget_view.h"
#include "ui/widgets/gradients_view.h"
#include "ui/widgets/kernel_view.h"
#include "ui/widgets/ladder_view.h"
#include "ui/widgets/main_window.h"
#include "ui/widgets/memory_view.h"
#include "ui/widgets/multihead_view.h"
#include "ui/widgets/scenario_panel.h"
#include "ui/widgets/strategies_view.h"
#include "ui/widgets/window_geometry.h"

#include <QAction>
#include <QApplication>
#include <QDockWidget>
#include <QLabel>
#include <QMenu>
#include <QSplitter>
#include <QTimer>

#include <algorithm>

namespace matmulviz::ui {
namespace {

/// Black on white with saturated accents: readable on a projector in a lit room.
QPalette highContrastPalette() {
  QPalette p;
  p.setColor(QPalette::Window, Qt::white);
  p.setColor(QPalette::WindowText, Qt::black);
  p.setColor(QPalette::Base, Qt::white);
  p.setColor(QPalette::AlternateBase, QColor(235, 235, 235));
  p.setColor(QPalette::Text, Qt::black);
  p.setColor(QPalette::Button, QColor(230, 230, 230));
  p.setColor(QPalette::ButtonText, Qt::black);
  p.setColor(QPalette::Highlight, QColor(0, 60, 180));
  p.setColor(QPalette::HighlightedText, Qt::white);
  p.setColor(QPalette::ToolTipBase, Qt::black);
  p.setColor(QPalette::ToolTipText, Qt::white);
  // setColor(role, c) sets every colour group: without these, a disabled button (Cancel when
  // nothing runs) would read as black as an enabled one. Mid grey stays legible (about 5:1 on
  // white) and still reads as unavailable.
  const QColor disabled(110, 110, 110);
  for (QPalette::ColorRole role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
    p.setColor(QPalette::Disabled, role, disabled);
  return p;
}

struct Lesson {
  const char* title;
  const char* kernel;
  int m, k, n, tpb;
  const char* preset;  ///< non-null: run this preset's strategies (on meta: memory only)
};

// From the fast.ai lesson (the per-thread kernel) to the forum post (the strategies).
constexpr Lesson kLessons[] = {
    {"1. One block for a 5x10 output: TPB 16, 206 of 256 threads idle", "naive", 5, 784, 10, 16,
     nullptr},
    {"2. The 50000x10 output: a grid of 3125 blocks", "naive", 50000, 784, 10, 16, nullptr},
    {"3. Coalesced: x over columns", "coalesced", 40, 64, 40, 8, nullptr},
    {"4. Shared-memory tiles, filled and consumed phase by phase", "smem_tiled", 40, 37, 33, 8,
     nullptr},
    {"5. A missing barrier: the race the simulator catches", "smem_tiled_no_sync", 40, 37, 33, 8,
     nullptr},
    {"6. The forum post's strategies: why c[q] costs 2 GiB (memory only)", "naive", 5, 784, 10, 16,
     "seed000"},
    {"7. The same with requires_grad on a (memory only)", "naive", 5, 784, 10, 16, "seed000-grad"},
};

}  // namespace

void MainWindow::buildLessonsMenu(QMenu* view) {
  QMenu* lessons = view->addMenu(tr("&Lessons"));
  for (int i = 0; i < int(std::size(kLessons)); ++i)
    lessons->addAction(tr(kLessons[i].title), this, [this, i] { startLesson(i); });
  lessons->addSeparator();
  leaveLessonAction_ =
      lessons->addAction(tr("&Back to my scenario"), this, &MainWindow::leaveLesson);
  leaveLessonAction_->setToolTip(
      tr("Leave the lessons: the scenario you had before the first lesson comes back"));
  leaveLessonAction_->setEnabled(false);
}

// A lesson's scenario is temporary: the user's own is kept aside (and is what saveSession
// writes), and comes back with leaveLesson(), when classroom mode ends, or on the next start.
void MainWindow::startLesson(int lesson) {
  const Lesson& l = kLessons[lesson];
  if (!beforeLesson_) beforeLesson_ = panel_->scenario();
  leaveLessonAction_->setEnabled(true);
  Scenario s = panel_->scenario();
  if (l.preset) {
    if (!panel_->selectPreset(QString::fromLatin1(l.preset))) return;
    s = panel_->scenario();
    s.config.device = DeviceKind::Meta;
  }
  s.kernel = QString::fromLatin1(l.kernel);
  s.kernelM = l.m, s.kernelK = l.k, s.kernelN = l.n, s.tpb = l.tpb;
  panel_->setScenario(s);
  if (l.preset) {
    showView(View::Strategies);
    runStrategies();
  } else {
    showView(View::Kernel);
  }
}

void MainWindow::leaveLesson() {
  if (!beforeLesson_) return;
  const Scenario own = *beforeLesson_;
  beforeLesson_.reset();
  leaveLessonAction_->setEnabled(false);
  panel_->setScenario(own);
  statusText_->setText(tr("Back to your scenario (%1)").arg(own.label()));
}

void MainWindow::setClassroomMode(bool on) {
  if (on == classroom_) return;
  if (!on) leaveLesson();
  classroom_ = on;
  classroomAction_->setChecked(on);
  if (on) {
    QFont large = normalFont_;
    large.setPointSizeF(normalFont_.pointSizeF() * 1.5);
    QApplication::setFont(large);
    QApplication::setPalette(highContrastPalette());
    showFullScreen();
    // Without a window manager (Xvfb, a bare projector session) full screen is not applied:
    // at least keep the window on the screen.
    QTimer::singleShot(0, this, [this] { keepOnScreen(this, true); });
  } else {
    QApplication::setFont(normalFont_);
    QApplication::setPalette(normalPalette_);
    showNormal();
  }
  // The scenario panel is for preparing a class; the lessons menu drives it while presenting.
  if (auto* dock = findChild<QDockWidget*>("scenarioDock")) dock->setVisible(!on);
  // Large fonts need room: the speed ladder gets a quarter of the Kernel tab while presenting
  // (its bars stay readable; the kernel's grid keeps the height of a 720 px projector).
  if (auto* split = findChild<QSplitter*>("kernelSplitter")) {
    const int h = std::max(split->height(), 600);
    split->setSizes(on ? QList<int>{h * 3 / 4, h / 4} : QList<int>{h * 5 / 6, h / 6});
  }
  kernelView_->setPresentationMode(on);
  strategiesView_->setPresentationMode(on);
  memoryView_->setPresentationMode(on);
  gradientsView_->setPresentationMode(on);
  multiheadView_->setPresentationMode(on);
  ladderView_->setPresentationMode(on);
  budgetView_->setPresentationMode(on);
}

}  // namespace matmulviz::ui
