#pragma once
// The screenshot tour behind `matmulviz --screenshots DIR` (scripts/screenshot): sets up each
// view with real data from the seed workloads, waits for it, saves the window as a PNG, and
// quits (exit code 1 when a step times out or fails, naming it). Last, the Program view runs
// examples/peak_lines.py (from the folder the app started in) and a click on its peak is shown;
// `--tour program` takes only those.

#include <QObject>
#include <QString>
#include <QTimer>

#include <functional>
#include <vector>

namespace matmulviz::ui {
class MainWindow;
}

namespace matmulviz::app {

class ScreenshotTour : public QObject {
  Q_OBJECT
 public:
  /// `programOnly`: only the Program view's shots.
  ScreenshotTour(ui::MainWindow& window, QString dir, bool programOnly = false,
                 QObject* parent = nullptr);
  void start();

 private:
  struct Step {
    QString name;
    std::function<void()> action;
    std::function<bool()> done;  ///< polled until true (or the step's time runs out)
    int timeoutMs = 30000;
  };
  void buildSteps();
  /// The Program view: a run of examples/peak_lines.py, its peak clicked
  /// (screenshot_tour_program.cpp).
  void addProgramSteps();
  void next();
  void poll();
  void shoot(const QString& file);
  void runPreset(const QString& preset, bool meta);

  ui::MainWindow& window_;
  QString dir_;
  std::vector<Step> steps_;
  size_t current_ = 0;
  int waitedMs_ = 0;
  int runsSeen_ = 0;
  bool programOnly_ = false;
  QTimer timer_;
};

}  // namespace matmulviz::app
