#pragma once
// Before QApplication exists: the options that only print text (--help, --version) must work
// without a display, where Qt's default platform would abort ("could not connect to display").

#include <optional>
#include <string>

namespace matmulviz::app {

/// Chooses Qt's platform from the command line and the environment, before QApplication is
/// made. With no display (neither DISPLAY nor WAYLAND_DISPLAY set) and no QT_QPA_PLATFORM:
/// options that only print (-h, --help, --help-all, -?, -v, --version) get the offscreen
/// platform and return std::nullopt; anything else returns the message to print (exit status
/// 1) instead of letting Qt abort. Returns std::nullopt otherwise, changing nothing.
std::optional<std::string> choosePlatform(int argc, char** argv);

}  // namespace matmulviz::app
