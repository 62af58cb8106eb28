#include "ui/widgets/window_geometry.h"

#include <QGuiApplication>
#include <QScreen>
#include <QWidget>

#include <algorithm>

namespace matmulviz::ui {

QRect clampToScreen(const QRect& window, const QRect& available) {
  if (!available.isValid()) return window;
  const int w = std::min(window.width(), available.width());
  const int h = std::min(window.height(), available.height());
  const int x = std::clamp(window.x(), available.left(), available.left() + available.width() - w);
  const int y = std::clamp(window.y(), available.top(), available.top() + available.height() - h);
  return {x, y, w, h};
}

namespace {

/// Sets `window`'s frame to `fitted` (its client area keeps the frame's margins).
void setFrame(QWidget* window, const QRect& fitted) {
  const QRect frame = window->frameGeometry(), client = window->geometry();
  const QMargins margins(client.left() - frame.left(), client.top() - frame.top(),
                         frame.right() - client.right(), frame.bottom() - client.bottom());
  window->setGeometry(fitted.marginsRemoved(margins));
}

QRect areaFor(const QWidget* window, bool wholeScreen) {
  const QScreen* screen = window->screen() ? window->screen() : QGuiApplication::primaryScreen();
  if (!screen) return {};
  return wholeScreen ? screen->geometry() : screen->availableGeometry();
}

}  // namespace

void keepOnScreen(QWidget* window, bool wholeScreen) {
  const QRect available = areaFor(window, wholeScreen);
  const QRect fitted = clampToScreen(window->frameGeometry(), available);
  if (available.isValid() && fitted != window->frameGeometry()) setFrame(window, fitted);
}

bool restoreGeometryOnScreen(QWidget* window, const QByteArray& saved) {
  const bool restored = !saved.isEmpty() && window->restoreGeometry(saved);
  if (!restored || window->isMaximized() || window->isFullScreen()) return restored;
  keepOnScreen(window);
  return restored;
}

}  // namespace matmulviz::ui
