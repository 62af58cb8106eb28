// Replot time of the Strategies charts with 1000 runs in the history (issue 4: under 16 ms),
// offscreen at 1600x900, both layouts and the three metrics. Also the time to rebuild after a
// run is appended (rebuild + replot), which is what a user waits for after each run.
// Not a test: prints milliseconds (median of the repetitions) next to the target.
// Usage: bench_ui_charts [--png DIR]

#include "tests/bench/bench_stats.h"
#include "ui/charts/strategies_chart.h"
#include "ui/models/run_history.h"

#include <QApplication>
#include <QElapsedTimer>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

using namespace matmulviz::ui;

namespace {

using matmulviz::bench::median;

constexpr double kTargetMs = 16.0;

/// A run like the seed's table: five strategies, requires_grad alternating, a failure now and
/// then, times spread over decades and a prediction for each.
RunEntry syntheticRun(int i, std::mt19937& rng) {
  static const char* const names[] = {"strategy1", "strategy2", "strategy3", "direct", "fused"};
  static const double seconds[] = {0.9, 0.8, 0.3, 0.39, 0.033};
  static const double maxMiB[] = {2208, 160, 128, 2144, 97};
  std::lognormal_distribution<double> noise(0, 0.1);
  RunEntry e;
  e.title = QStringLiteral("run %1").arg(i);
  e.requiresGrad = i % 2 ? QStringLiteral("a") : QStringLiteral("none");
  e.device = QStringLiteral("cpu");
  for (int s = 0; s < 5; ++s) {
    StrategyResult r;
    r.strategy = QString::fromLatin1(names[s]);
    r.ok = (i * 7 + s) % 97 != 0;
    if (!r.ok) r.error = QStringLiteral("out of memory");
    r.timeMedianS = seconds[s] * noise(rng);
    r.curMemBytes = qint64(96) << 20;
    r.maxMemBytes = qint64(maxMiB[s] * (1 << 20));
    r.predictedS = seconds[s] / 300;
    r.predictedGpu = QStringLiteral("NVIDIA H100 SXM (model)");
    e.results << r;
  }
  return e;
}

/// With `--png DIR`, each measured chart is also written there, to look at.
QString& pngDir() {
  static QString dir;
  return dir;
}

void measure(const RunHistory& history, StrategiesChart::Layout layout,
             StrategiesChart::Metric metric, const char* name, std::mt19937& rng) {
  StrategiesChart chart;
  chart.resize(1600, 900);
  chart.setHistory(&history);
  chart.setLayout(layout);
  chart.setMetric(metric);
  chart.show();
  QApplication::processEvents();
  std::vector<double> replot, rebuild;
  for (int i = 0; i < 30; ++i) {
    QElapsedTimer t;
    t.start();
    chart.replotNow();
    replot.push_back(t.nsecsElapsed() / 1e6);
  }
  auto& h = const_cast<RunHistory&>(history);
  for (int i = 0; i < 10; ++i) {
    QElapsedTimer t;
    t.start();
    h.append(syntheticRun(h.size(), rng));  // the chart rebuilds on appended
    chart.replotNow();
    rebuild.push_back(t.nsecsElapsed() / 1e6);
  }
  if (!pngDir().isEmpty())
    chart.exportTo(pngDir() + QLatin1Char('/') + chart.chartName() + QStringLiteral("-1000.png"));
  const double r = median(replot);
  std::printf(
      "%-26s runs %5d  replot %7.2f ms  append+rebuild+replot %7.2f ms  (target < %.0f ms: %s)\n",
      name, h.size(), r, median(rebuild), kTargetMs, r < kTargetMs ? "ok" : "MISSED");
}

}  // namespace

int main(int argc, char** argv) {
  if (!qEnvironmentVariableIsSet("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  const QStringList args = QApplication::arguments();
  if (args.size() > 2 && args[1] == QLatin1String("--png")) pngDir() = args[2];
  std::mt19937 rng(0);
  RunHistory history;
  for (int i = 0; i < 1000; ++i) history.append(syntheticRun(i, rng));
  using L = StrategiesChart::Layout;
  using M = StrategiesChart::Metric;
  std::printf(
      "StrategiesChart, 1600x900 offscreen, 1000 runs x 5 strategies (median of 30 replots)\n");
  measure(history, L::BarsLatest, M::Time, "bars, time", rng);
  measure(history, L::BarsLatest, M::MaxMem, "bars, maxMem", rng);
  measure(history, L::LinesOverRuns, M::Time, "lines, time (+ model)", rng);
  measure(history, L::LinesOverRuns, M::MaxMem, "lines, maxMem", rng);
  measure(history, L::LinesOverRuns, M::CurMem, "lines, curMem", rng);
  return 0;
}
