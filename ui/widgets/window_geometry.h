#pragma once
// Keeping the main window on its screen: a saved geometry from a bigger screen (or from a window
// a long label once widened) is restored moved and shrunk to fit the screen's available area,
// so the window never reopens larger than the screen.

#include <QByteArray>
#include <QRect>

class QWidget;

namespace matmulviz::ui {

/// `window` (a frame rectangle, pixels) shrunk to at most `available`'s size and moved inside
/// it; unchanged when it already fits. `available` is a screen's availableGeometry().
QRect clampToScreen(const QRect& window, const QRect& available);

/// QWidget::restoreGeometry(`saved`) (nothing when `saved` is empty or invalid), then the
/// window clamped to its screen's available geometry (clampToScreen), and a maximized or full
/// screen window stays so. Returns whether `saved` was restored.
bool restoreGeometryOnScreen(QWidget* window, const QByteArray& saved);

/// Moves (and, down to its minimum size, shrinks) `window` so that its frame lies on its
/// screen's available geometry (`wholeScreen`: the whole screen, as a full-screen window covers
/// it); nothing when it already does. For a window that a window manager may not place (full
/// screen with none running, as under Xvfb).
void keepOnScreen(QWidget* window, bool wholeScreen = false);

}  // namespace matmulviz::ui
