#include "app/cli/export_application.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>

namespace matmulviz::cli {

std::unique_ptr<QApplication> makeApplication() {
  if (QCoreApplication::instance()) return nullptr;
  const bool display =
      qEnvironmentVariableIsSet("DISPLAY") || qEnvironmentVariableIsSet("WAYLAND_DISPLAY");
  if (!display && !qEnvironmentVariableIsSet("QT_QPA_PLATFORM"))
    qputenv("QT_QPA_PLATFORM", "offscreen");
  if (!QFileInfo(qEnvironmentVariable("XDG_RUNTIME_DIR")).isDir()) {  // unset or missing
    static QTemporaryDir runtime(QDir::tempPath() + QStringLiteral("/matmulviz-runtime-XXXXXX"));
    if (runtime.isValid()) qputenv("XDG_RUNTIME_DIR", QFile::encodeName(runtime.path()));
  }
  static int argc = 1;
  static char arg0[] = "matmulviz-cli";
  static char* argv[] = {arg0, nullptr};
  return std::make_unique<QApplication>(argc, argv);
}

}  // namespace matmulviz::cli
