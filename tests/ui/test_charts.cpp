// The charts, offscreen, fed with real runs of the small preset: each holds the expected series
// and point counts, shows failures without crashing, exports non-empty PNG, SVG and PDF files,
// and keeps its series through the log toggle and presentation mode.

#include "tests/models/strategies_fixture.h"
#include "ui/charts/chart_export.h"
#include "ui/charts/heatmap_chart.h"
#include "ui/charts/ladder_chart.h"
#include "ui/charts/memory_timeline_chart.h"
#include "ui/charts/strategies_chart.h"
#include "ui/models/memory_timeline_model.h"
#include "ui/models/run_history.h"
#include "ui/models/tensor_grid_model.h"

#include <QApplication>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest/QtTest>

using namespace matmulviz;
using namespace matmulviz::ui;
using Metric = StrategiesChart::Metric;
using Layout = StrategiesChart::Layout;

Q_DECLARE_METATYPE(matmulviz::ui::StrategiesChart::Metric)
Q_DECLARE_METATYPE(matmulviz::ui::StrategiesChart::Layout)

class TestCharts : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase();
  void strategiesBars_data();
  void strategiesBars();
  void strategiesLines_data();
  void strategiesLines();
  void failedRunsAreShown();
  void memoryTimeline_data();
  void memoryTimeline();
  void longTimelinesAreThinned();
  void heatmap();
  void ladder();
  void exportFormats_data();
  void exportFormats();
  void logAndPresentationKeepTheSeries();
  void exportAllCharts();

 private:
  StrategiesReport cpuGrad_;  ///< cpu, N 200, a and c require grad, backward: timelines, grads
  RunHistory history_;        ///< cpu a,c; meta none; meta a
};

void TestCharts::initTestCase() {
  // N 200 rather than 1000: the loop strategies' backward is per row (slow under ASan).
  testing::SmallRun cpu{DeviceKind::Cpu, true, true, true};
  cpu.n = 200;
  cpuGrad_ = testing::runSmall(cpu);
  history_.append(runEntryFromReport(cpuGrad_, "cpu a,c", costmodel::findGpuProfile("h100")));
  history_.append(
      runEntryFromReport(testing::runSmall({}), "meta none", costmodel::findGpuProfile("h100")));
  history_.append(runEntryFromReport(testing::runSmall({DeviceKind::Meta, true}), "meta a",
                                     costmodel::findGpuProfile("h100")));
}

void TestCharts::strategiesBars_data() {
  QTest::addColumn<Metric>("metric");
  QTest::addColumn<bool>("predicted");
  QTest::newRow("time") << Metric::Time << true;
  QTest::newRow("curMem") << Metric::CurMem << false;
  QTest::newRow("maxMem") << Metric::MaxMem << false;
}

void TestCharts::strategiesBars() {
  QFETCH(Metric, metric);
  QFETCH(bool, predicted);
  StrategiesChart chart;
  chart.setHistory(&history_);
  chart.setLayout(Layout::BarsLatest);
  chart.setMetric(metric);
  // Only runs of the latest run's workload and device are compared: the cpu run (n 200) is not.
  QStringList expected{"requires_grad: none", "requires_grad: a"};
  if (predicted) expected << "model: H100 (predicted)";
  QCOMPARE(chart.seriesNames(), expected);
  for (const QString& s : expected) QCOMPARE(chart.pointCount(s), 5);
  QCOMPARE(chart.logScale(), metric == Metric::Time);
  QCOMPARE(chart.pointCount("nope"), -1);
  const QStringList csv = chart.csv().split('\n', Qt::SkipEmptyParts);
  QCOMPARE(csv.size(), 1 + 15);  // the CSV carries the whole history: 3 runs x 5 strategies
}

void TestCharts::strategiesLines_data() {
  QTest::addColumn<Metric>("metric");
  QTest::newRow("time") << Metric::Time;
  QTest::newRow("maxMem") << Metric::MaxMem;
}

void TestCharts::strategiesLines() {
  QFETCH(Metric, metric);
  StrategiesChart chart;
  chart.setLayout(Layout::LinesOverRuns);
  chart.setMetric(metric);
  RunHistory history;
  chart.setHistory(&history);
  QVERIFY(chart.seriesNames().isEmpty());
  for (const RunEntry& e : history_.entries()) history.append(e);  // follows appended
  const QStringList strategies{"strategy1", "strategy2", "strategy3", "direct", "fused"};
  for (const QString& s : strategies) QCOMPARE(chart.pointCount(s), 3);
  if (metric == Metric::Time) {
    for (const QString& s : strategies)
      QCOMPARE(chart.pointCount(s + ", model: H100 (predicted)"), 3);
    QCOMPARE(chart.seriesNames().size(), 10);
  } else {
    QCOMPARE(chart.seriesNames(), strategies);
  }
  history.clear();
  QVERIFY(chart.seriesNames().isEmpty());
}

void TestCharts::failedRunsAreShown() {
  RunHistory history;
  history.append(history_.entries()[1]);
  RunEntry failed = history_.entries()[1];
  failed.results[3].ok = false;  // direct
  failed.results[3].error = "CUDA out of memory";
  history.append(failed);
  RunEntry empty;  // a run that failed as a whole: no results
  empty.ok = false;
  history.append(empty);
  StrategiesChart chart;
  chart.setHistory(&history);
  chart.setLayout(Layout::LinesOverRuns);
  chart.setMetric(Metric::MaxMem);
  QCOMPARE(chart.pointCount("failed"), 1);
  QCOMPARE(chart.pointCount("direct"), 2);  // the failed one is a gap (NaN)
  chart.setLayout(Layout::BarsLatest);
  QCOMPARE(chart.pointCount("requires_grad: none"), 4);  // no bar for the failure
  QVERIFY(chart.csv().contains("direct,false,"));
  chart.replotNow();
}

void TestCharts::memoryTimeline_data() {
  QTest::addColumn<int>("run");
  for (int i = 0; i < 5; ++i) QTest::addRow("%s", cpuGrad_.runs[size_t(i)].strategy.c_str()) << i;
}

void TestCharts::memoryTimeline() {
  QFETCH(int, run);
  const StrategyRun& r = cpuGrad_.runs[size_t(run)];
  MemoryTimelineModel model;
  model.setTimeline(r.timeline, QString::fromStdString(r.strategy));
  MemoryTimelineChart chart;
  chart.setModel(&model);
  const QStringList names = chart.seriesNames();
  QVERIFY(names.contains("requested"));
  QVERIFY(names.contains("reserved"));
  QVERIFY(names.contains("allocated: inputs"));
  QVERIFY(names.contains("allocated: gradients"));  // backward ran
  const int points = std::min(model.eventCount(), MemoryTimelineChart::maxPlottedEvents());
  for (const QString& n : names) QCOMPARE(chart.pointCount(n), points);
  QVERIFY(chart.plottedEvents().contains(model.peakEvent()));
  QCOMPARE(chart.chartName(), "memory-timeline-" + QString::fromStdString(r.strategy));
  QCOMPARE(chart.csv().count('\n'), model.eventCount() + 1);
  model.clear();  // the chart follows the model's reset
  QVERIFY(chart.seriesNames().isEmpty());
}

void TestCharts::longTimelinesAreThinned() {
  MemoryTimeline t;
  t.opNames = {"op"};
  t.records.push_back({1, "c[q]", 0, 512, 512, true, false});
  const int n = 50'000;
  for (int i = 0; i < n; ++i) {
    const bool alloc = i % 2 == 0;
    const int64_t allocated = alloc ? 512 + (i == 31'234 ? 1 << 20 : 0) : 0;
    t.events.push_back({alloc ? MemoryEventKind::Alloc : MemoryEventKind::Free,
                        1,
                        512,
                        double(i),
                        {allocated, allocated, 2 << 20},
                        0});
  }
  MemoryTimelineModel model;
  model.setTimeline(t, "synthetic");
  MemoryTimelineChart chart;
  chart.setModel(&model);
  QCOMPARE(model.peakEvent(), 31'234);
  QVERIFY(chart.plottedEvents().size() <= MemoryTimelineChart::maxPlottedEvents());
  QVERIFY(chart.plottedEvents().contains(31'234));
  QCOMPARE(chart.plottedEvents().front(), 0);
  QCOMPARE(chart.plottedEvents().back(), n - 1);
  QVERIFY(std::is_sorted(chart.plottedEvents().begin(), chart.plottedEvents().end()));
}

void TestCharts::heatmap() {
  TensorGridModel model;
  model.setTensor(cpuGrad_.runs[0].backward.dC, "dC, strategy1");  // [64, 16, 24]
  HeatmapChart chart;
  chart.setModel(&model);
  QCOMPARE(chart.seriesNames(), QStringList{"dC, strategy1"});
  QCOMPARE(chart.pointCount("dC, strategy1"), 16 * 24);
  QCOMPARE(chart.title(), QString("dC, strategy1, slice 1 of 64"));
  model.setSlice(3);
  QCOMPARE(chart.title(), QString("dC, strategy1, slice 4 of 64"));
  QCOMPARE(chart.chartName(), QString("heatmap-dC-strategy1"));
  QVERIFY(!chart.supportsLogScale());
  chart.resize(800, 600);
  chart.show();
  QVERIFY(QTest::qWaitForWindowExposed(&chart));
  chart.replotNow();
  QSignalSpy hovered(&chart, &HeatmapChart::hovered);
  QWidget* plot = chart.findChild<QWidget*>();
  QVERIFY(plot);
  QMouseEvent move(QEvent::MouseMove, QPointF(plot->width() / 2.0, plot->height() / 2.0),
                   plot->mapToGlobal(QPointF(plot->width() / 2.0, plot->height() / 2.0)),
                   Qt::NoButton, Qt::NoButton, Qt::NoModifier);
  QApplication::sendEvent(plot, &move);
  QCOMPARE(hovered.size(), 1);
  const int row = hovered[0][0].toInt(), col = hovered[0][1].toInt();
  QVERIFY(row >= 0 && row < 16 && col >= 0 && col < 24);
  QCOMPARE(hovered[0][2].toDouble(), model.value(row, col));
}

void TestCharts::ladder() {
  LadderChart chart;
  // Before a run the chart says what fills it, instead of showing empty axes.
  QVERIFY(chart.placeholderText().contains("Run the speed ladder"));
  const auto rungs = LadderChart::rungsFromTimes({{"naive", 8.0, 0, true, {}},
                                                  {"failed one", NAN, 0, false, "out of memory"},
                                                  {"tiled", 2.0, 0, true, {}},
                                                  {"cuBLAS", 0.25, 0, true, {}}});
  QVERIFY(std::isnan(rungs[0].speedupOverPrevious));
  QCOMPARE(rungs[2].speedupOverPrevious, 4.0);  // over naive: the failed rung is skipped
  QCOMPARE(rungs[3].speedupOverPrevious, 8.0);
  chart.setRungs(rungs);
  QVERIFY(chart.placeholderText().isEmpty());
  QCOMPARE(chart.seriesNames(), QStringList{"time"});
  QCOMPARE(chart.pointCount("time"), 3);
  QVERIFY(chart.logScale());
  QCOMPARE(chart.csv().count('\n'), 5);
  kernels::LadderReport lesson;  // as kernels::runLadder returns it, without a GPU
  lesson.rungs = {{"simulated", "naive kernel", true, "", 2.0, 0.004, 0, 1e-7},
                  {"blas", "one sgemm", true, "", 0.001, 8.0, 2000, 1e-7},
                  {"cublas", "", false, "no CUDA device", 0, 0, 0, 0}};
  const auto fromLesson = LadderChart::rungsFromLadder(lesson);
  QCOMPARE(fromLesson.size(), 3);
  QCOMPARE(fromLesson[1].speedupOverPrevious, 2000.0);
  QVERIFY(std::isnan(fromLesson[0].speedupOverPrevious));
  QCOMPARE(fromLesson[2].note, QString("skipped: no CUDA device"));
  chart.setRungs(fromLesson);
  QCOMPARE(chart.pointCount("time"), 2);
}

void TestCharts::exportFormats_data() {
  QTest::addColumn<QString>("suffix");
  QTest::newRow("png") << "png";
  QTest::newRow("svg") << "svg";
  QTest::newRow("pdf") << "pdf";
}

void TestCharts::exportFormats() {
  QFETCH(QString, suffix);
  QTemporaryDir dir;
  StrategiesChart strategies;
  strategies.setHistory(&history_);
  MemoryTimelineModel memoryModel;
  memoryModel.setTimeline(cpuGrad_.runs[2].timeline, "strategy3");
  MemoryTimelineChart memory;
  memory.setModel(&memoryModel);
  TensorGridModel gridModel;
  gridModel.setTensor(cpuGrad_.runs[0].backward.dA, "dA, strategy1");
  HeatmapChart heatmap;
  heatmap.setModel(&gridModel);
  LadderChart ladder;
  ladder.setRungs(LadderChart::rungsFromTimes({{"a", 1, 0, true, {}}, {"b", 0.1, 0, true, {}}}));
  for (ChartView* chart :
       std::initializer_list<ChartView*>{&strategies, &memory, &heatmap, &ladder}) {
    const QString path = dir.filePath(chart->chartName() + "." + suffix);
    QString error;
    QVERIFY2(chart->exportTo(path, QSize(800, 450), &error), qPrintable(error));
    QVERIFY2(QFileInfo(path).size() > 1000, qPrintable(path));
    QVERIFY(chart->exportTo(dir.filePath("default." + suffix), &error));
  }
  QString error;
  QVERIFY(!ladder.exportTo(dir.filePath("x.bmp"), &error));
  QVERIFY2(error.contains("unknown format 'bmp'"), qPrintable(error));
  QVERIFY(!ladder.exportTo(dir.filePath("missing/dir/x." + suffix), &error));
  QVERIFY2(error.contains("missing/dir"), qPrintable(error));
}

void TestCharts::logAndPresentationKeepTheSeries() {
  StrategiesChart chart;
  chart.setHistory(&history_);
  chart.setMetric(Metric::MaxMem);
  const QStringList names = chart.seriesNames();
  QSignalSpy log(&chart, &ChartView::logScaleChanged);
  chart.setLogScale(true);
  QVERIFY(chart.logScale());
  QCOMPARE(log.size(), 1);
  QCOMPARE(chart.seriesNames(), names);
  chart.setPresentationMode(true);
  QVERIFY(chart.presentationMode());
  QCOMPARE(chart.seriesNames(), names);
  // To look at: MATMULVIZ_CHART_PNG_DIR=/tmp/x test_charts writes the chart in this mode.
  const QString lookAt = qEnvironmentVariable("MATMULVIZ_CHART_PNG_DIR");
  if (!lookAt.isEmpty()) QVERIFY(chart.exportTo(lookAt + "/presentation-log-maxmem.png"));
  for (const QString& n : names) QCOMPARE(chart.pointCount(n), 5);
  chart.setLogScale(false);
  chart.setPresentationMode(false);
  QCOMPARE(log.size(), 2);
  HeatmapChart heatmap;
  heatmap.setLogScale(true);  // not meaningful: ignored
  QVERIFY(!heatmap.logScale());
}

void TestCharts::exportAllCharts() {
  QTemporaryDir dir;
  QString error;
  const QStringList files = exportStrategyCharts(history_, cpuGrad_, dir.path(),
                                                 {"png", "csv", "json"}, &error, QSize(640, 360));
  QVERIFY2(error.isEmpty(), qPrintable(error));
  // 5 strategies charts + ladder + 5 timelines + 10 heatmaps, each png and csv.
  QCOMPARE(files.size(), (5 + 1 + 5 + 10) * 2);
  for (const QString& f : files) QVERIFY2(QFileInfo(f).size() > 0, qPrintable(f));
  QVERIFY(files.contains(dir.filePath("memory-timeline-direct.png")));
  QVERIFY(files.contains(dir.filePath("heatmap-dA-fused.csv")));
  QVERIFY(files.contains(dir.filePath("speed-ladder.png")));
}

int main(int argc, char** argv) {
  if (!qEnvironmentVariableIsSet("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  TestCharts t;
  return QTest::qExec(&t, argc, argv);
}

#include "test_charts.moc"
