// Issue 16: a PyTorch memory snapshot of nearly a million events (the largest opened in memory,
// not through a store) stacked by allocation in the Memory view. Prints the open (loadFile:
// parse, timeline, bands, block facts), the first frame, and the replot time of the bands chart
// whole and zoomed (median and max), beside the category chart's replot of the same timeline.
// Not a test: numbers vary with load.
// Usage: bench_ui_snapshot_bands [EVENTS]   (default 990000)
#include "tests/bench/bench_stats.h"
#include "tests/common/snapshot_generator.h"
#include "ui/charts/allocation_bands_chart.h"
#include "ui/charts/memory_timeline_chart.h"
#include "ui/models/open_file.h"
#include "ui/widgets/memory_view.h"

#include <QApplication>
#include <QComboBox>
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QWheelEvent>

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <vector>

using namespace matmulviz;
using namespace matmulviz::ui;

namespace {

double peakRssMiB() {
  rusage r{};
  getrusage(RUSAGE_SELF, &r);
  return double(r.ru_maxrss) / 1024.0;
}

}  // namespace

int main(int argc, char** argv) {
  if (!qEnvironmentVariableIsSet("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  const uint64_t events = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 990000;
  QTemporaryDir dir;
  const QString path = dir.filePath("bands.pickle");
  testing::SnapshotGenerator::write(path.toStdString(), events);
  QElapsedTimer t;
  t.start();
  const OpenedFile file = loadFile(path);
  const double loadMs = double(t.nsecsElapsed()) / 1e6;
  MemoryView view;
  view.resize(1400, 900);
  t.restart();
  view.setTimelines(file.fileName, "Device", file.timelines, file.note);
  view.setSnapshotAllocations(file.allocations);
  view.show();
  AllocationBandsChart* chart = view.bandsChart();
  chart->replotNow();
  const double firstMs = double(t.nsecsElapsed()) / 1e6;
  std::printf("%llu events: loadFile %.0f ms (store: %s), first frame %.0f ms, %d of %d bands\n",
              static_cast<unsigned long long>(file.eventCount), loadMs, file.store ? "yes" : "no",
              firstMs, chart->bandCount(), chart->allocationCount());
  std::vector<double> whole, zoomed;
  for (int i = 0; i < 10; ++i) {
    chart->replotNow();
    whole.push_back(chart->lastReplotMs());
  }
  const QPoint centre = chart->rect().center();
  for (int i = 0; i < 10; ++i) {  // a wheel step in each time
    QWheelEvent wheel(centre, chart->mapToGlobal(centre), {}, {0, 120}, Qt::NoButton, {},
                      Qt::NoScrollPhase, false);
    QApplication::sendEvent(chart->findChild<QWidget*>(), &wheel);
    chart->replotNow();
    zoomed.push_back(chart->lastReplotMs());
  }
  std::printf("  replot, whole range   median %6.2f ms  max %6.2f ms\n", bench::median(whole),
              *std::max_element(whole.begin(), whole.end()));
  std::printf("  replot, zooming in    median %6.2f ms  max %6.2f ms\n", bench::median(zoomed),
              *std::max_element(zoomed.begin(), zoomed.end()));
  // The same timeline stacked by category, for scale: the chart the view drew before.
  auto* stackBy = view.findChild<QComboBox*>("memoryStackBy");
  stackBy->setCurrentIndex(0);
  emit stackBy->activated(0);
  std::vector<double> category;
  for (int i = 0; i < 10; ++i) {
    view.chart()->replotNow();
    category.push_back(view.chart()->lastReplotMs());
  }
  std::printf("  category chart replot median %6.2f ms  max %6.2f ms\n", bench::median(category),
              *std::max_element(category.begin(), category.end()));
  std::printf("  peak RSS %.0f MiB\n", peakRssMiB());
  return 0;
}
