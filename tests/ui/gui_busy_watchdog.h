#pragma once
// StallWatchdog's twin that counts the GUI thread's CPU time instead of wall time: the longest
// stretch of CPU the thread spent between two turns of its event loop. On a loaded machine a
// wall-clock gap also holds the time the thread waited for a core; the CPU time is what the
// events themselves cost, so it is the number to hold against a limit in a test. And
// EventTimingApp, an application that times each event it dispatches on the GUI thread.
// Header-only, for the offscreen UI tests and the benchmarks; Linux (CLOCK_THREAD_CPUTIME_ID).

#include <QApplication>
#include <QHash>
#include <QObject>
#include <QString>
#include <QThread>
#include <QTimer>

#include <algorithm>
#include <ctime>

namespace matmulviz::testing {

/// CPU time of the calling thread, ms.
inline double threadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

/// The application, timing the events the GUI thread dispatches: the most CPU time one
/// outermost event took (a window's repaint with all its paint events is one; what a user feels
/// as a frozen window), and the most one event to a receiver of a given class took, nested
/// ones included. Use it in place of QApplication in main().
class EventTimingApp : public QApplication {
 public:
  using QApplication::QApplication;
  bool notify(QObject* receiver, QEvent* event) override {
    if (QThread::currentThread() != thread()) return QApplication::notify(receiver, event);
    // read before the dispatch: a DeferredDelete event deletes its receiver
    const char* cls = receiver->metaObject()->className();
    const int type = int(event->type());
    ++depth_;
    const double start = threadCpuMs();
    const bool handled = QApplication::notify(receiver, event);
    const double ms = threadCpuMs() - start;
    --depth_;
    double& forClass = byClass_[QLatin1String(cls)];
    forClass = std::max(forClass, ms);
    if (depth_ == 0 && ms > longestMs_) {
      longestMs_ = ms;
      longestWhat_ = QStringLiteral("event %1 to %2").arg(type).arg(QLatin1String(cls));
    }
    return handled;
  }
  void resetEventTimes() {
    longestMs_ = 0;
    longestWhat_.clear();
    byClass_.clear();
  }
  /// The most CPU time one outermost event took since resetEventTimes(), ms, and which it was.
  double longestEventMs() const { return longestMs_; }
  QString longestEvent() const { return longestWhat_; }
  /// The most CPU time one event to a `className` (with its namespace) took, ms.
  double longestEventMsFor(const QString& className) const { return byClass_.value(className, 0); }
  static EventTimingApp* instance() { return static_cast<EventTimingApp*>(qApp); }

 private:
  int depth_ = 0;
  double longestMs_ = 0;
  QString longestWhat_;
  QHash<QString, double> byClass_;
};

class GuiBusyWatchdog : public QObject {
 public:
  explicit GuiBusyWatchdog(int intervalMs = 5, QObject* parent = nullptr)
      : QObject(parent), intervalMs_(intervalMs) {
    timer_.setTimerType(Qt::PreciseTimer);
    timer_.setInterval(intervalMs_);
    QObject::connect(&timer_, &QTimer::timeout, this, [this] {
      const double now = threadCpuMs();
      longestMs_ = std::max(longestMs_, now - lastMs_);
      lastMs_ = now;
    });
  }

  /// Starts (or restarts) measuring; call it on the GUI thread.
  void start() {
    longestMs_ = 0;
    lastMs_ = threadCpuMs();
    timer_.start();
  }
  void stop() { timer_.stop(); }
  /// The most CPU time the GUI thread spent between two turns of its event loop since start(),
  /// ms (the timer's own slot included, a few microseconds).
  double longestBusyMs() const { return longestMs_; }

 private:
  QTimer timer_;
  int intervalMs_;
  double lastMs_ = 0, longestMs_ = 0;
};

}  // namespace matmulviz::testing
