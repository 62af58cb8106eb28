// Progress is typed between the runner and its front ends (issue 15, "typed messages"): the
// runner reports RunProgress structs in order, the CLI words them with describe() as it always
// has, and the app's progress bar computes its fraction from the fields (no text is parsed),
// going from 0 to 1 without stepping back.

#include "core/strategies/preset.h"
#include "core/strategies/runner.h"
#include "ui/widgets/run_controller.h"

#include <QtTest/QtTest>

#include <QSignalSpy>

using namespace matmulviz;
using namespace matmulviz::ui;

namespace {

using Phase = RunProgress::Phase;

RunConfig smallConfig(DeviceKind device) {
  RunConfig c = loadPreset("small").config;
  c.device = device;
  c.strategies = {"strategy1", "strategy2", "direct"};
  c.repeats = 2;
  c.requiresGrad.c = true;
  c.backward = true;
  return c;
}

/// "phase strategy repeat/count" per report, for readable comparisons.
QStringList compact(const std::vector<RunProgress>& ps) {
  static const char* names[] = {"memory",  "estimate", "reference",
                                "forward", "backward", "finished"};
  QStringList out;
  for (const RunProgress& p : ps)
    out << QStringLiteral("%1 %2 %3/%4")
               .arg(QLatin1String(names[int(p.phase)]), QString::fromStdString(p.strategy))
               .arg(p.repeat)
               .arg(p.repeatCount);
  return out;
}

}  // namespace

class TestRunProgress : public QObject {
  Q_OBJECT

 private slots:
  // The cpu device with backward: every phase, in the order the runner takes them.
  void runnerReportsTypedProgressInOrder() {
    const RunConfig c = smallConfig(DeviceKind::Cpu);
    StrategyRunner runner(c, makeRandomInputs(c.workload, c.seed));
    std::vector<RunProgress> seen;
    const ProgressFn record = [&](const RunProgress& p) { seen.push_back(p); };
    runner.checkFitsInHostMemory(record);
    const StrategiesReport report = runner.run(record);
    QCOMPARE(int(report.runs.size()), 3);

    const QStringList expected{
        "memory strategy1 0/2",   "memory strategy2 0/2",   "memory direct 0/2",
        "estimate strategy1 0/2", "estimate strategy2 0/2", "estimate direct 0/2",
        "reference  0/2",         "forward strategy1 1/2",  "forward strategy1 2/2",
        "backward strategy1 2/2", "forward strategy2 1/2",  "forward strategy2 2/2",
        "backward strategy2 2/2", "forward direct 1/2",     "forward direct 2/2",
        "backward direct 2/2",    "finished  0/2"};
    QCOMPARE(compact(seen), expected);
    for (const RunProgress& p : seen) {
      QCOMPARE(p.strategyCount, 3);
      if (!p.strategy.empty()) QCOMPARE(c.strategies.at(size_t(p.strategyIndex)), p.strategy);
    }
  }

  // The CLI's words for each phase, as its stderr has always shown them.
  void describeKeepsTheCliWording() {
    RunProgress p;
    p.strategy = "strategy2";
    p.strategyIndex = 1;
    p.strategyCount = 5;
    p.repeat = 1;
    p.repeatCount = 3;
    QCOMPARE(describe(p), std::string("strategy2: run 1 of 3"));
    p.phase = Phase::Backward;
    QCOMPARE(describe(p), std::string("strategy2: backward"));
    p.phase = Phase::CheckingMemory;
    QCOMPARE(describe(p), std::string("checking the memory strategy2 needs (meta dry run)"));
    p.phase = Phase::EstimatingBackward;
    QCOMPARE(describe(p), std::string("estimating the backward of strategy2"));
    p.phase = Phase::Reference;
    QCOMPARE(describe(p), std::string("computing the float64 reference"));
  }

  // The progress bar through the controller's signal: from 0 to 1, never stepping back, with
  // the runner's words as the status text.
  void controllerFractionGoesFromZeroToOne() {
    Scenario s = Scenario::fromPreset(loadPreset("small"));
    s.config = smallConfig(DeviceKind::Cpu);
    RunController controller;
    QSignalSpy progress(&controller, &RunController::progress);
    QSignalSpy finished(&controller, &RunController::finished);
    QVERIFY(controller.start(s));
    QVERIFY(controller.wait(120'000));
    QCOMPARE(finished.count(), 1);

    QList<double> fractions;
    QStringList texts;
    for (const QList<QVariant>& args : progress) {
      texts << args.at(0).toString();
      if (const double f = args.at(1).toDouble(); f >= 0) fractions << f;
    }
    QVERIFY2(texts.contains("strategy2: run 2 of 2"), qPrintable(texts.join('\n')));
    QVERIFY(!fractions.isEmpty());
    QCOMPARE(fractions.first(), 0.0);
    QCOMPARE(fractions.last(), 1.0);
    for (int x = 1; x < fractions.size(); ++x)
      QVERIFY2(fractions[x] >= fractions[x - 1], qPrintable(texts.join('\n')));
    // Each forward repeat and backward moves the bar: 3 strategies x (2 repeats + backward),
    // and the end.
    QCOMPARE(fractions.size(), 3 * 3 + 1);
    QCOMPARE(std::adjacent_find(fractions.begin(), fractions.end()), fractions.end());
  }

  // The fraction from the fields alone: none before the first repeat, 1 only at Finished.
  void fractionOfEachPhase() {
    RunProgress p;
    p.strategyCount = 2;
    p.repeatCount = 4;
    p.phase = Phase::Reference;
    QCOMPARE(RunController::fractionOf(p), -1.0);
    p.phase = Phase::Forward;
    p.strategyIndex = 1;
    p.repeat = 3;
    QCOMPARE(RunController::fractionOf(p), (1 + 2.0 / 4) / 2);
    p.phase = Phase::Backward;
    p.repeat = 4;
    QCOMPARE(RunController::fractionOf(p), (1 + 3.5 / 4) / 2);
    p.phase = Phase::Finished;
    QCOMPARE(RunController::fractionOf(p), 1.0);
  }
};

QTEST_MAIN(TestRunProgress)
#include "test_run_progress.moc"
