// matmulviz: the desktop app. Composition only: options, the main window, and (for
// scripts/screenshot) the screenshot tour.
#include "app/gui/platform_choice.h"
#include "app/gui/screenshot_tour.h"
#include "core/costmodel/profile_file.h"
#include "ui/widgets/compare_controller.h"
#include "ui/widgets/compare_window.h"
#include "ui/widgets/file_loader.h"
#include "ui/widgets/main_window.h"
#include "ui/widgets/scenario_panel.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QTimer>

#include <cstdio>
#include <optional>
#include <stdexcept>

namespace {

/// --preset and --view: 0, or 2 after saying on stderr which value is unknown.
int applyPresetAndView(matmulviz::ui::MainWindow& window, const QCommandLineParser& cli,
                       const QCommandLineOption& preset, const QCommandLineOption& view,
                       const QStringList& views) {
  if (cli.isSet(preset) && !window.scenarioPanel()->selectPreset(cli.value(preset))) {
    std::fprintf(stderr, "matmulviz: --preset: unknown preset '%s'\n",
                 qPrintable(cli.value(preset)));
    return 2;
  }
  if (cli.isSet(view)) {
    const int index = views.indexOf(cli.value(view).toLower());
    if (index < 0) {
      std::fprintf(stderr, "matmulviz: --view: '%s' is not one of %s\n",
                   qPrintable(cli.value(view)), qPrintable(views.join(", ")));
      return 2;
    }
    window.showView(matmulviz::ui::MainWindow::View(index));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (const auto noDisplay = matmulviz::app::choosePlatform(argc, argv)) {
    std::fprintf(stderr, "%s\n", noDisplay->c_str());
    return 1;
  }
  QApplication app(argc, argv);
  QApplication::setOrganizationName("matmulviz");
  QApplication::setApplicationName("matmulviz");
  QApplication::setApplicationVersion("0.1.0");

  QCommandLineParser cli;
  cli.setApplicationDescription(
      "How a matrix multiplication executes on a GPU and what memory it costs.");
  cli.addHelpOption();
  cli.addVersionOption();
  const QCommandLineOption present("present", "Start in classroom mode (full screen, large).");
  const QCommandLineOption preset("preset", "Start with the preset <name> (seed000, small, ...).",
                                  "name");
  // In the order of MainWindow::View and the tabs.
  const QStringList views{"kernel",    "strategies", "memory", "gradients",
                          "multihead", "budget",     "program"};
  const QCommandLineOption view("view", "Start on <view>: " + views.join(", ") + ".", "view");
  const QCommandLineOption run("run", "Run the strategies as soon as the window opens.");
  const QCommandLineOption history("history", "Keep the run history in <file>.", "file");
  const QCommandLineOption shots("screenshots",
                                 "Visit every view with a small scenario, save PNGs into <dir> "
                                 "and quit (used by scripts/screenshot).",
                                 "dir");
  const QCommandLineOption tour(
      "tour", "With --screenshots: 'program' takes only the Program view's.", "name");
  const QCommandLineOption compare(
      "compare",
      "Compare the two FILEs side by side (reports, Python runs' reports or snapshots): "
      "matmulviz --compare A.json B.json; with --view strategies, on the "
      "comparison's Strategies page.");
  const QCommandLineOption model(
      "model",
      "Predicted GPU times on <gpu>: h200 (default), h100, a100, t4, or a profile file written "
      "by matmulviz-cli calibrate on the user's own GPU.",
      "gpu");
  cli.addOptions({present, preset, view, run, history, shots, tour, compare, model});
  cli.addPositionalArgument("files",
                            "Reports (matmulviz-cli ... --json, python3 -m matmulviz ... "
                            "--report), presets, PyTorch memory snapshots or Python scripts to "
                            "open.",
                            "[FILE...]");
  cli.process(app);

  if (cli.isSet(compare) && cli.positionalArguments().size() != 2) {
    std::fprintf(stderr, "matmulviz: --compare: give two files, A and B (got %d)\n",
                 int(cli.positionalArguments().size()));
    return 2;
  }
  std::optional<matmulviz::costmodel::GpuProfile> gpuProfile;
  if (cli.isSet(model)) {
    try {
      gpuProfile = matmulviz::costmodel::resolveGpuProfile(cli.value(model).toStdString());
    } catch (const std::invalid_argument& e) {
      std::fprintf(stderr, "matmulviz: %s\n", e.what());
      return 2;
    }
  }
  using matmulviz::ui::MainWindow;
  MainWindow window(cli.value(history));
  if (gpuProfile) window.setGpuProfile(*gpuProfile);
  if (const int status = applyPresetAndView(window, cli, preset, view, views)) return status;
  if (cli.isSet(shots)) {
    auto* screenshots = new matmulviz::app::ScreenshotTour(
        window, cli.value(shots), cli.value(tour) == QLatin1String("program"), &app);
    QTimer::singleShot(0, screenshots, &matmulviz::app::ScreenshotTour::start);
    window.resize(1600, 1000);
    window.show();
    return app.exec();
  }
  window.show();
  // Read on a worker thread once the window shows; a report opens on Strategies unless --view
  // chose a view, a snapshot on Memory.
  if (cli.isSet(compare))
    QTimer::singleShot(0, &window, [&window, &cli, &view, files = cli.positionalArguments()] {
      // --view strategies or memory picks the Compare window's page.
      const bool strategies = cli.value(view).toLower() == QLatin1String("strategies");
      QObject::connect(
          window.compareController(), &matmulviz::ui::CompareController::compared, &window,
          [&window, strategies] {
            if (strategies)
              window.compareController()->compareWindow()->showPage(
                  matmulviz::ui::CompareWindow::Page::Strategies);
          },
          Qt::SingleShotConnection);
      window.compareController()->compareFiles(files[0], files[1]);
    });
  else if (!cli.positionalArguments().isEmpty())
    QTimer::singleShot(0, &window,
                       [&window, files = cli.positionalArguments()] { window.openFiles(files); });
  if (cli.isSet(present)) window.setClassroomMode(true);
  if (cli.isSet(run) && !cli.positionalArguments().isEmpty())  // once the files are open
    QObject::connect(window.fileLoader(), &matmulviz::ui::FileLoader::idle, &window,
                     &MainWindow::runStrategies, Qt::SingleShotConnection);
  else if (cli.isSet(run))
    QTimer::singleShot(0, &window, &MainWindow::runStrategies);
  return app.exec();
}
