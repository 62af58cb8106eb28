#pragma once
// The longest stall of the GUI thread's event loop: a timer meant to fire every `intervalMs`
// records the longest gap between two of its turns, less the interval. A paint, a model reset or
// a slot that holds the thread for 145 ms shows as a stall of about 145 ms. Header-only, for the
// offscreen UI tests and the benchmarks. Measures only while the event loop runs (QTest::qWait,
// QEventLoop::exec, QTest::qWaitFor).

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>

#include <algorithm>

namespace matmulviz::testing {

class StallWatchdog : public QObject {
 public:
  explicit StallWatchdog(int intervalMs = 5, QObject* parent = nullptr)
      : QObject(parent), intervalMs_(intervalMs) {
    timer_.setTimerType(Qt::PreciseTimer);
    timer_.setInterval(intervalMs_);
    QObject::connect(&timer_, &QTimer::timeout, this, [this] {
      const double now = double(clock_.nsecsElapsed()) / 1e6;
      longestMs_ = std::max(longestMs_, now - lastMs_ - intervalMs_);
      lastMs_ = now;
    });
  }

  /// Starts (or restarts) measuring; longestStallMs() is 0 until the loop has turned twice.
  void start() {
    longestMs_ = 0;
    clock_.start();
    lastMs_ = 0;
    timer_.start();
  }
  void stop() { timer_.stop(); }
  /// The longest gap between two turns of the event loop since start(), less the interval, ms.
  double longestStallMs() const { return longestMs_; }

 private:
  QTimer timer_;
  QElapsedTimer clock_;
  int intervalMs_;
  double lastMs_ = 0, longestMs_ = 0;
};

}  // namespace matmulviz::testing
