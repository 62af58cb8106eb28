#pragma once
// StallWatchdog's twin that counts the GUI thread's CPU time instead of wall time: the longest
// stretch of CPU the thread spent between two turns of its event loop. On a loaded machine a
// wall-clock gap also holds the time the thread waited for a core; the CPU time is what the
// events themselves cost, so it is the number to hold against a limit in a test. Header-only,
// for the offscreen UI tests and the benchmarks; Linux (CLOCK_THREAD_CPUTIME_ID).

#include <QObject>
#include <QTimer>

#include <algorithm>
#include <ctime>

namespace matmulviz::testing {

class GuiBusyWatchdog : public QObject {
 public:
  explicit GuiBusyWatchdog(int intervalMs = 5, QObject* parent = nullptr)
      : QObject(parent), intervalMs_(intervalMs) {
    timer_.setTimerType(Qt::PreciseTimer);
    timer_.setInterval(intervalMs_);
    QObject::connect(&timer_, &QTimer::timeout, this, [this] {
      const double now = cpuMs();
      longestMs_ = std::max(longestMs_, now - lastMs_);
      lastMs_ = now;
    });
  }

  /// Starts (or restarts) measuring; call it on the GUI thread.
  void start() {
    longestMs_ = 0;
    lastMs_ = cpuMs();
    timer_.start();
  }
  void stop() { timer_.stop(); }
  /// The most CPU time the GUI thread spent between two turns of its event loop since start(),
  /// ms (the timer's own slot included, a few microseconds).
  double longestBusyMs() const { return longestMs_; }

 private:
  static double cpuMs() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
  }

  QTimer timer_;
  int intervalMs_;
  double lastMs_ = 0, longestMs_ = 0;
};

}  // namespace matmulviz::testing
