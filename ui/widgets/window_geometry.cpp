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

bool restoreGeometryOnScreen(QWidget* window, const QByteArray& saved) {
  const bool restored = !saved.isEmpty() && window->restoreGeometry(saved);
  if (!restored || window->isMaximized() || window->isFullScreen()) return restored;
  QScreen* screen = window->screen() ? window->screen() : QGuiApplication::primaryScreen();
  if (!screen) return restored;
  const QRect available = screen->availableGeometry();
  // The frame (title bar, borders) around the client area counts; before the window is shown
  // it is unknown, so the client area keeps a margin of what the frame usually takes.
  const QRect frame = window->frameGeometry();
  const QMargins margins(
      window->geometry().left() - frame.left(), window->geometry().top() - frame.top(),
      frame.right() - window->geometry().right(), frame.bottom() - window->geometry().bottom());
  const QRect fitted = clampToScreen(frame, available);
  if (fitted == frame) return restored;
  window->setGeometry(fitted.marginsRemoved(margins));
  return restored;
}

}  // namespace matmulviz::ui
