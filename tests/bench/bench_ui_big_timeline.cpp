// Issue 16, item 4: a PyTorch memory snapshot of 1 M and 10 M events in the Memory view.
// Prints the open time (parse, store, first frame), the frame time of panning and zooming the
// level-of-detail chart (median and max), and the process's peak resident memory. Targets:
// open under 5 s, frames under 16 ms, memory under 2 GB. Not a test: numbers vary with load.
// Usage: bench_ui_big_timeline [EVENTS] [--png DIR]   (no EVENTS: 1 M then 10 M, each in a
// process of its own so that each peak RSS is its own)
// The snapshot is generated first (tests/common/snapshot_generator.h), outside the timings.

#include "tests/bench/bench_stats.h"
#include "tests/common/snapshot_generator.h"
#include "ui/charts/big_timeline_chart.h"
#include "ui/models/open_file.h"
#include "ui/widgets/memory_view.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QProcess>
#include <QTemporaryDir>

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>

using namespace matmulviz;
using namespace matmulviz::ui;

namespace {

using bench::median;

double peakRssMiB() {
  rusage r{};
  getrusage(RUSAGE_SELF, &r);
  return double(r.ru_maxrss) / 1024.0;
}

struct Frames {
  std::vector<double> ms;
  void print(const char* what) const {
    std::printf("  %-34s median %6.2f ms  max %6.2f ms  (%zu frames, target < 16)\n", what,
                median(ms), *std::max_element(ms.begin(), ms.end()), ms.size());
  }
};

/// One frame: the range moves, the chart queries the store and replots.
double frame(BigTimelineChart* chart, double lo, double hi) {
  QElapsedTimer t;
  t.start();
  chart->setVisibleRange(lo, hi);
  chart->replotNow();
  const double ms = double(t.nsecsElapsed()) / 1e6;
  if (getenv("BENCH_VERBOSE"))
    std::printf("frame %.1f ms: query %.1f ms, replot %.1f ms, %d columns\n", ms,
                chart->lastQueryMs(), chart->lastReplotMs(), chart->columnCount());
  return ms;
}

void panAndZoom(BigTimelineChart* chart, double events) {
  for (const double width : {events, events / 10, events / 1000, 2000.0}) {
    Frames pan;
    double lo = events / 2 - width / 2;
    for (int i = 0; i < 60; ++i, lo += width * 0.02) pan.ms.push_back(frame(chart, lo, lo + width));
    const std::string label = "pan, " + std::to_string(int64_t(width)) + " events wide";
    pan.print(label.c_str());
  }
  Frames zoom;
  double width = events;
  for (int i = 0; i < 60; ++i, width /= 1.25)
    zoom.ms.push_back(frame(chart, events * 0.4 - width / 2, events * 0.4 + width / 2));
  for (int i = 0; i < 60; ++i, width *= 1.25)
    zoom.ms.push_back(frame(chart, events * 0.4 - width / 2, events * 0.4 + width / 2));
  zoom.print("zoom in and out (1.25x a frame)");
}

int run(uint64_t events, const QString& pngDir) {
  QTemporaryDir dir;
  const QString path = dir.filePath("snapshot.pickle");
  QElapsedTimer t;
  t.start();
  // In a process of its own: the generator holds the whole file, which is not the view's RSS.
  QProcess gen;
  gen.setProcessChannelMode(QProcess::ForwardedChannels);
  gen.start(QApplication::applicationFilePath(), {"--generate", QString::number(events), path});
  gen.waitForFinished(-1);
  std::printf("  generated in %.1f s (not timed below)\n", double(t.elapsed()) / 1e3);
  std::fflush(stdout);
  MemoryView view;
  view.resize(1600, 1000);
  view.show();
  QApplication::processEvents();
  t.restart();
  OpenedFile file = loadFile(path, {}, nullptr, 0);  // the store even at 1 M (the threshold)
  const double loadS = double(t.nsecsElapsed()) / 1e9;
  view.setStore(file.fileName, file.store, file.note);
  QApplication::processEvents();  // the chart's page is laid out at its size
  view.bigChart()->replotNow();
  const double openS = double(t.nsecsElapsed()) / 1e9;
  std::printf("  open: %.2f s (parse and store %.2f s, first frame %.0f ms; target < 5 s)\n", openS,
              loadS, (openS - loadS) * 1e3);
  std::printf("  peak RSS after open: %.0f MiB; chart %dx%d, %d columns drawn\n", peakRssMiB(),
              view.bigChart()->width(), view.bigChart()->height(), view.bigChart()->columnCount());
  if (!pngDir.isEmpty())
    view.bigChart()->exportTo(QStringLiteral("%1/big-timeline-%2.png").arg(pngDir).arg(events));
  panAndZoom(view.bigChart(), double(events));
  std::printf("  peak RSS: %.0f MiB (target < 2048)\n", peakRssMiB());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (!qEnvironmentVariableIsSet("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  QStringList args = QApplication::arguments();
  QString png;
  if (const int i = int(args.indexOf("--png")); i > 0 && i + 1 < args.size()) {
    png = args[i + 1];
    args.remove(i, 2);
  }
  if (args.size() == 4 && args[1] == "--generate") {
    const auto g = testing::SnapshotGenerator::write(args[3].toStdString(), args[2].toULongLong());
    std::printf("%llu events, %.0f MB\n", (unsigned long long)g.events, double(g.bytes) / 1e6);
    return 0;
  }
  std::printf("Memory view, big timeline (BigTimelineChart 1600x1000 offscreen), %s events\n",
              args.size() > 1 ? qPrintable(args[1]) : "1 M and 10 M");
  std::fflush(stdout);
  if (args.size() > 1) return run(args[1].toULongLong(), png);
  for (const char* n : {"1000000", "10000000"}) {
    QStringList childArgs{QString::fromLatin1(n)};
    if (!png.isEmpty()) childArgs << "--png" << png;
    QProcess child;
    child.setProcessChannelMode(QProcess::ForwardedChannels);
    child.start(QApplication::applicationFilePath(), childArgs);
    child.waitForFinished(-1);
  }
  return 0;
}
