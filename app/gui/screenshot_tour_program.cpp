// The screenshot tour's Program view shots: examples/peak_lines.py run through the Python
// module, then its peak clicked on the timeline (program.png), then the cursor on the line that
// holds the most at the peak (program-line.png).
#include "app/gui/screenshot_tour.h"

#include "ui/models/program_run.h"
#include "ui/widgets/main_window.h"
#include "ui/widgets/program_view.h"

#include <QCoreApplication>

#include <cstdio>

namespace matmulviz::app {

using ui::MainWindow;

void ScreenshotTour::addProgramSteps() {
  ui::ProgramView* pv = window_.programView();
  auto hasRun = [pv] { return !pv->isRunning() && pv->currentRun() != nullptr; };
  steps_.push_back({"program: run examples/peak_lines.py",
                    [this, pv] {
                      window_.setClassroomMode(false);
                      window_.showView(MainWindow::View::Program);
                      QString error;
                      if (!pv->openScript(QStringLiteral("examples/peak_lines.py"), &error)) {
                        std::fprintf(stderr, "screenshots: %s\n", qPrintable(error));
                        QCoreApplication::exit(1);
                        return;
                      }
                      pv->run();
                    },
                    hasRun, 120000});
  steps_.push_back({"program: click the peak",
                    [pv] { pv->selectEvent(pv->currentRun()->peakEvent()); }, [] { return true; }});
  steps_.push_back({"shot", [this] { shoot("program.png"); }, [] { return true; }});
  steps_.push_back({"program: the line holding the most at the peak",
                    [pv] {
                      const auto& groups = pv->currentRun()->peakGroups();
                      if (!groups.isEmpty()) pv->selectLine(groups.front().scriptLine);
                    },
                    [] { return true; }});
  steps_.push_back({"shot", [this] { shoot("program-line.png"); }, [] { return true; }});
}

}  // namespace matmulviz::app
