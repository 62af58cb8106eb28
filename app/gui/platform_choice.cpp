#include "app/gui/platform_choice.h"

#include <QByteArray>
#include <QtGlobal>

#include <cstring>

namespace matmulviz::app {

namespace {

bool printsOnly(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    for (const char* option : {"-h", "--help", "--help-all", "-?", "-v", "--version"})
      if (std::strcmp(argv[i], option) == 0) return true;
  return false;
}

}  // namespace

std::optional<std::string> choosePlatform(int argc, char** argv) {
  const bool display =
      qEnvironmentVariableIsSet("DISPLAY") || qEnvironmentVariableIsSet("WAYLAND_DISPLAY");
  if (display || qEnvironmentVariableIsSet("QT_QPA_PLATFORM")) return std::nullopt;
  if (printsOnly(argc, argv)) {
    qputenv("QT_QPA_PLATFORM", QByteArrayLiteral("offscreen"));
    return std::nullopt;
  }
  return "matmulviz: no display to open the window on (neither DISPLAY nor WAYLAND_DISPLAY is "
         "set). Without a display, `matmulviz-cli export --out DIR` writes the same charts, and "
         "`scripts/run` does that for the default scenario; QT_QPA_PLATFORM=offscreen runs the "
         "window with nothing shown.";
}

}  // namespace matmulviz::app
