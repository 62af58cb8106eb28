#include "ui/widgets/first_start_layout.h"

#include <QDockWidget>
#include <QGuiApplication>
#include <QMainWindow>
#include <QScreen>
#include <QStyle>

#include <algorithm>

namespace matmulviz::ui {

void applyFirstStartGeometry(QMainWindow& window) {
  const QScreen* screen = window.screen() ? window.screen() : QGuiApplication::primaryScreen();
  if (!screen) return;
  const QRect available = screen->availableGeometry();
  const int width = std::min(available.width() * 9 / 10, 1800);
  const int height = std::min(available.height() * 9 / 10, 1100);
  window.resize(width, height);
  window.move(available.center() - QPoint(width / 2, height / 2));
}

void giveDockItsNaturalWidth(QMainWindow& window, QDockWidget& dock, const QWidget& panel) {
  const int scrollBar = window.style()->pixelMetric(QStyle::PM_ScrollBarExtent);
  const int margins = 2 * window.style()->pixelMetric(QStyle::PM_DockWidgetFrameWidth) + 8;
  const int natural = panel.sizeHint().width() + scrollBar + margins;
  const int width =
      std::min(natural, std::max(window.width() / 3, panel.minimumSizeHint().width()));
  window.resizeDocks({&dock}, {width}, Qt::Horizontal);
}

}  // namespace matmulviz::ui
