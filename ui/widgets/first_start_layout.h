#pragma once
// The window a new user sees first: with no saved geometry (a fresh settings folder) the main
// window takes most of the available screen, centred, and the Scenario dock gets the width its
// panel needs, so every field shows without dragging a splitter.

class QMainWindow;
class QDockWidget;
class QWidget;

namespace matmulviz::ui {

/// Resizes `window` to about 90% of its screen's available geometry (at most 1800 x 1100
/// pixels, at least what fits), centred. Call before show().
void applyFirstStartGeometry(QMainWindow& window);

/// Gives `dock` the width of `panel`'s size hint plus a vertical scroll bar, capped at a third
/// of the window. Call once the window is shown (QMainWindow::resizeDocks works on laid-out
/// docks).
void giveDockItsNaturalWidth(QMainWindow& window, QDockWidget& dock, const QWidget& panel);

}  // namespace matmulviz::ui
