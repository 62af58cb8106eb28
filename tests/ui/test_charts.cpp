// The charts, offscreen, fed with real runs of the small preset: each holds the expected series
// and point counts, shows failures without crashing, exports non-empty PNG, SVG and PDF files,
// and keeps its series through the log toggle and presentation mode.

#include "tests/models/strategies_fixture.h"
#include "ui/charts/chart_export.h"
#include "ui/charts/compare_diff_chart.h"
#include "ui/charts/heatmap_chart.h"
#include "ui/charts/ladder_chart.h"
#include "ui/charts/memory_timeline_chart.h"
#include "ui/charts/strategies_chart.h"
#include "ui/charts/strategies_chart_data.h"
#include "ui/models/memory_timeline_model.h"
#include "ui/models/run_history.h"
#include "ui/models/tensor_grid_model.h"

#include <qcustomplot.h>
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
  void metaTimesAreLeftOut();
  void oneRunLinesAreReadable();
  void timeLabelsStayBelowAThousand();
  void barLabelsStandUprightWhenCrowded();
  void namesAreNotTypesetAsPowers();
  void memoryTimeline_data();
  void memoryTimeline();
  void longTimelinesAreThinned();
  void flippingLinesAreBands();
  void scaleToAllocated();
  void heatmap();
  void heatmapPdfEmbedsTheCells();
  void ladder();
  void ladderRates_data();
  void ladderRates();
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
  // They ran on meta, which does no arithmetic: no measured time, only the model's.
  QStringList expected{"requires_grad: none", "requires_grad: a"};
  if (predicted) expected = QStringList{"model: H100 (predicted)"};
  QCOMPARE(chart.seriesNames(), expected);
  for (const QString& s : expected) QCOMPARE(chart.pointCount(s), 5);
  QCOMPARE(chart.texts().count("meta: not timed"), predicted ? 10 : 0);
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

void TestCharts::metaTimesAreLeftOut() {
  // cpu then meta, same workload: the meta run's times are bookkeeping, never a measured time.
  RunHistory history;
  RunEntry cpu = history_.entries()[1];
  cpu.device = "cpu";
  history.append(cpu);
  history.append(history_.entries()[1]);  // meta
  StrategiesChart chart;
  chart.setHistory(&history);
  chart.setLayout(Layout::LinesOverRuns);
  chart.setMetric(Metric::Time);
  for (const char* s : {"strategy1", "fused"}) {
    QCOMPARE(chart.pointCount(s), 2);
    QVERIFY(chart.csv().contains(QString(",%1,true,,").arg(s)));  // meta: no time in the CSV
  }
  QVERIFY(chart.texts().join('\n').contains("meta runs: not timed"));
  chart.setLayout(Layout::BarsLatest);  // the latest run is meta: only the model's bars
  QCOMPARE(chart.seriesNames(), QStringList{"model: H100 (predicted)"});
  QVERIFY(chart.texts().join('\n').contains("meta: no arithmetic, not timed"));
  chart.setMetric(Metric::MaxMem);  // memory is measured on meta
  QCOMPARE(chart.seriesNames(), QStringList{"requires_grad: none"});
  QVERIFY(!chart.texts().join('\n').contains("not timed"));
}

void TestCharts::oneRunLinesAreReadable() {
  // strategies-time-lines of a single run: every series in the legend is drawn (markers: a
  // line of one point is invisible) and each value is written beside its marker.
  RunHistory history;
  RunEntry cpu = history_.entries()[0];
  history.append(cpu);
  StrategiesChart chart;
  chart.setHistory(&history);
  chart.setLayout(Layout::LinesOverRuns);
  chart.setMetric(Metric::Time);
  QCOMPARE(chart.seriesNames().size(), 10);  // 5 measured, 5 predicted
  for (const QString& name : chart.seriesNames()) QCOMPARE(chart.pointCount(name), 1);
  const QStringList texts = chart.texts();
  QCOMPARE(texts.filter(" (model)").size(), 5);
  QCOMPARE(texts.filter(QRegularExpression("^[0-9.]+ (s|ms|µs)$")).size(), 5);
  const QString lookAt = qEnvironmentVariable("MATMULVIZ_CHART_PNG_DIR");
  if (!lookAt.isEmpty()) QVERIFY(chart.exportTo(lookAt + "/one-run-time-lines.png", {1600, 900}));
}

void TestCharts::timeLabelsStayBelowAThousand() {
  // 3 significant digits in the unit that keeps them below 1000 once rounded: a median of
  // 999.7 us used to read "1e+03 µs"
  QCOMPARE(strategies_chart_detail::formatValue(0.000500, Metric::Time), QStringLiteral("500 µs"));
  QCOMPARE(strategies_chart_detail::formatValue(0.0009994, Metric::Time), QStringLiteral("999 µs"));
  QCOMPARE(strategies_chart_detail::formatValue(0.0009997, Metric::Time), QStringLiteral("1 ms"));
  QCOMPARE(strategies_chart_detail::formatValue(0.9997, Metric::Time), QStringLiteral("1 s"));
  QCOMPARE(strategies_chart_detail::formatValue(12.34, Metric::Time), QStringLiteral("12.3 s"));
  QCOMPARE(strategies_chart_detail::formatValue(1234.4, Metric::Time), QStringLiteral("1234 s"));
}

void TestCharts::namesAreNotTypesetAsPowers() {
  // A snapshot's block without frames is named by its address; QCustomPlot's default number
  // format ("gbd") would draw "block 0x7f6942e00000" as "block 0x7f6942·10^0".
  CompareDiffChart diff;
  diff.setRows({{"block 0x7f6942e00000", 0, 32 << 20}, {"mm 2e5", 1 << 20, 0}}, "label at the peak",
               "run vs cuda:0");
  QCustomPlot* plot = diff.findChild<QCustomPlot*>();
  QCOMPARE(plot->yAxis->numberFormat(), QString("g"));
  // Long names are elided in the middle so that the bars keep their room; the CSV has them whole.
  diff.setRows({{"cuBLAS workspace of the autograd thread at mlp_backward.py:22", 32 << 20, 0}},
               "label at the peak", "run vs cuda:0");
  const auto ticker = plot->yAxis->ticker().dynamicCast<QCPAxisTickerText>();
  QVERIFY(ticker);
  QCOMPARE(ticker->ticks().value(1), QString("cuBLAS workspace …mlp_backward.py:22"));
  QVERIFY(diff.csv().contains("cuBLAS workspace of the autograd thread at mlp_backward.py:22"));
  LadderChart ladder;
  ladder.setRungs(LadderChart::rungsFromTimes({{"tile 16e2", 1.0, 0, true, {}}}));
  QCOMPARE(ladder.findChild<QCustomPlot*>()->yAxis->numberFormat(), QString("g"));
}

void TestCharts::barLabelsStandUprightWhenCrowded() {
  // Four requires_grad settings and the prediction: five bars per strategy, narrower than
  // "2.57 ms" at 800 px. Labels turn upright so that neighbours never run together.
  RunHistory history;
  for (const char* setting : {"none", "a", "c", "a,c"}) {
    RunEntry e = history_.entries()[0];
    e.requiresGrad = setting;
    history.append(e);
  }
  StrategiesChart chart;
  chart.setHistory(&history);
  chart.setMetric(Metric::Time);
  QTemporaryDir dir;
  QVERIFY(chart.exportTo(dir.filePath("narrow.png"), {800, 600}));
  QCOMPARE(chart.uprightValueLabels(), 5 * 5);
  QVERIFY(chart.exportTo(dir.filePath("wide.png"), {4000, 600}));
  QCOMPARE(chart.uprightValueLabels(), 0);
  const QString lookAt = qEnvironmentVariable("MATMULVIZ_CHART_PNG_DIR");
  if (!lookAt.isEmpty()) QVERIFY(chart.exportTo(lookAt + "/crowded-bars.png", {1600, 900}));
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
  QVERIFY(chart.plottedEvents().size() <=
          std::min(model.eventCount(), MemoryTimelineChart::maxPlottedEvents()));
  for (const QString& n : names) {
    if (n.startsWith("allocated"))
      QCOMPARE(chart.pointCount(n), int(chart.plottedEvents().size()));
    else  // the lines: min and max per pixel column, and the last event
      QVERIFY(chart.pointCount(n) <= MemoryTimelineChart::lineColumns() + 1);
  }
  // One peak: the model's, as the Memory view's header says it; no hover hint in exports.
  QVERIFY(chart.showsPeak("peak " + model.peakText()));
  QVERIFY(!chart.texts().join('\n').contains("hover"));
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

void TestCharts::flippingLinesAreBands() {
  // requested flips between 0 and 1 MiB at every event (strategy1's backward allocates and frees
  // per row): drawn as a named band between its minima and maxima per pixel column, not as a
  // black block of vertical strokes.
  MemoryTimeline t;
  t.opNames = {"op"};
  t.records.push_back({1, "grad", 0, 1 << 20, 1 << 20, false, false});
  const int n = 6000;
  for (int i = 0; i < n; ++i) {
    const int64_t bytes = i % 2 == 0 ? 1 << 20 : 0;
    t.events.push_back({i % 2 == 0 ? MemoryEventKind::Alloc : MemoryEventKind::Free,
                        1,
                        1 << 20,
                        double(i),
                        {bytes, bytes, 2 << 20},
                        0});
  }
  MemoryTimelineModel model;
  model.setTimeline(t, "flipping");
  MemoryTimelineChart chart;
  chart.setModel(&model);
  QVERIFY(chart.seriesNames().contains("requested: range within a pixel"));
  QVERIFY(!chart.seriesNames().contains("reserved: range within a pixel"));  // constant
  QVERIFY(chart.pointCount("requested") <= MemoryTimelineChart::lineColumns() + 1);
  QCOMPARE(chart.pointCount("reserved"), chart.pointCount("requested"));
}

void TestCharts::scaleToAllocated() {
  // 512 bytes allocated in a 2 MiB segment: the reserved line would squeeze them to the bottom.
  MemoryTimeline t;
  t.opNames = {"op"};
  t.records.push_back({1, "c[q]", 0, 512, 512, true, false});
  t.events.push_back({MemoryEventKind::Alloc, 1, 512, 0.0, {512, 512, 2 << 20}, 0});
  t.events.push_back({MemoryEventKind::Free, 1, 512, 1.0, {0, 0, 2 << 20}, 0});
  MemoryTimelineModel model;
  model.setTimeline(t, "small");
  MemoryTimelineChart chart;
  QSignalSpy changed(&chart, &MemoryTimelineChart::scaleToAllocatedChanged);
  chart.setModel(&model);
  QVERIFY(chart.scaleToAllocatedByDefault());
  QVERIFY(chart.scaleToAllocated());
  QVERIFY(chart.texts().join('\n').contains("scaled to allocated: reserved reaches 2 MiB"));
  chart.setScaleToAllocated(false);
  QCOMPARE(changed.size(), 1);
  QVERIFY(!chart.texts().join('\n').contains("scaled to allocated"));
  // a timeline whose reserved stays near allocated keeps the full scale
  t.events[0].after.reservedBytes = t.events[1].after.reservedBytes = 1024;
  model.setTimeline(t, "tight");
  QVERIFY(!chart.scaleToAllocated());
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

void TestCharts::heatmapPdfEmbedsTheCells() {
  // dC of strategy1: [64, 16, 24] slices; the PDF carries the cells as one small image.
  TensorGridModel model;
  model.setTensor(cpuGrad_.runs[0].backward.dC, "dC, strategy1");
  HeatmapChart chart;
  chart.setModel(&model);
  QTemporaryDir dir;
  QString error;
  QVERIFY2(chart.exportTo(dir.filePath("h.pdf"), {1600, 900}, &error), qPrintable(error));
  const qint64 bytes = QFileInfo(dir.filePath("h.pdf")).size();
  QVERIFY2(bytes > 1000 && bytes < 200 * 1024, qPrintable(QString::number(bytes)));
  const QString lookAt = qEnvironmentVariable("MATMULVIZ_CHART_PNG_DIR");
  if (!lookAt.isEmpty()) QVERIFY(chart.exportTo(lookAt + "/heatmap.pdf", {1600, 900}));
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
  // times and speed-ups read as in the app's tables (core/util/format_units.h): no exponent
  chart.setRungs(
      LadderChart::rungsFromTimes({{"loop", 2.53e-4, 0, true, {}}, {"blas", 3.1e-8, 0, true, {}}}));
  QStringList labels;
  const auto* plot = chart.findChild<QCustomPlot*>();
  QVERIFY(plot);
  for (int i = 0; i < plot->itemCount(); ++i) {
    if (const auto* text = qobject_cast<QCPItemText*>(plot->item(i))) labels << text->text();
  }
  QVERIFY2(labels.contains("253 us"), qPrintable(labels.join(" | ")));
  QVERIFY2(labels.contains("31.0 ns   8160x"), qPrintable(labels.join(" | ")));
  const QString lookAt = qEnvironmentVariable("MATMULVIZ_CHART_PNG_DIR");
  if (!lookAt.isEmpty()) {
    chart.setRungs(LadderChart::rungsFromLadder(lesson));
    QVERIFY(chart.exportTo(lookAt + "/speed-ladder.png", {1200, 400}));
  }
}

// A rung's note gives its rate as the app's tables do (core/util/format_units.h's formatRate):
// a prefix, 3 significant digits, never an exponent ("8.15e+03 GFLOP/s" before).
void TestCharts::ladderRates_data() {
  QTest::addColumn<double>("gflops");
  QTest::addColumn<QString>("note");
  QTest::newRow("cuBLAS on an H200") << 8150.0 << "one sgemm (8.15 T FLOP/s)";
  QTest::newRow("BLAS on a laptop") << 8.0 << "one sgemm (8.00 G FLOP/s)";
  QTest::newRow("simulated") << 0.004 << "one sgemm (4.00 M FLOP/s)";
  QTest::newRow("beyond tera") << 2.5e6 << "one sgemm (2500 T FLOP/s)";
}

void TestCharts::ladderRates() {
  QFETCH(double, gflops);
  QFETCH(QString, note);
  kernels::LadderReport report;
  report.rungs = {{"blas", "one sgemm", true, "", 0.001, 8.0, 1, 1e-7}};
  report.rungs[0].gflops = gflops;
  const auto rungs = LadderChart::rungsFromLadder(report);
  QCOMPARE(rungs[0].note, note);
  LadderChart chart;
  chart.setRungs(rungs);
  QVERIFY(chart.csv().contains(note));
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
  // the strategies' ranking is not the Kernel view's speed ladder
  QVERIFY(files.contains(dir.filePath("strategies-ranking.png")));
  QVERIFY(!files.contains(dir.filePath("speed-ladder.png")));
}

int main(int argc, char** argv) {
  if (!qEnvironmentVariableIsSet("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  TestCharts t;
  return QTest::qExec(&t, argc, argv);
}

#include "test_charts.moc"
