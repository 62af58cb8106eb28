#pragma once
// The QApplication the chart-rendering commands (export, compare --out) need, headless when
// there is no display. Built only with the GUI libraries, like export_command.cpp.

#include <QApplication>

#include <memory>

namespace matmulviz::cli {

/// A QApplication for rendering; the offscreen platform when there is no display and the user
/// chose no platform. Without an XDG_RUNTIME_DIR folder (a headless session) it gets a private
/// one as the XDG spec asks (owned by the user, mode 0700, removed at exit), so that Qt does not
/// warn on every export. nullptr when an application exists already.
std::unique_ptr<QApplication> makeApplication();

}  // namespace matmulviz::cli
