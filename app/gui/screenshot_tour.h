#pragma once
// The screenshot tour behind `matmulviz --screenshots DIR` (scripts/screenshot): sets up each
// view with real data from the seed workloads, waits for it, saves the window as a PNG, and
// quits (exit code 1 when a step times out or fails, naming it).

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
  ScreenshotTour(ui::MainWindow& window, QString dir, QObject* parent = nullptr);
  void start();

 private:
  struct Step {
    QString name;
    std::function<void()> action;
    std::function<bool()> done;  ///< polled until true (or the step's time runs out)
    int timeoutMs = 30000;
  };
  void buildSteps();
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
  QTimer timer_;
};

}  // namespace matmulviz::app
