// The engine states why a backward was skipped as data (BackwardOutcome::Reason) and the app
// words the remedy for its panel (issue 15, "typed messages"): no CLI flag reaches the user of
// the app, who has none.

#include "core/strategies/preset.h"
#include "ui/widgets/run_controller.h"

#include <QtTest/QtTest>

#include <QSignalSpy>

using namespace matmulviz;
using namespace matmulviz::ui;

class TestRunMessages : public QObject {
  Q_OBJECT

 private slots:
  void skippedBackwardInThePanelsWords_data() {
    QTest::addColumn<bool>("requiresGrad");
    QTest::addColumn<int>("reason");
    QTest::addColumn<QString>("message");
    QTest::newRow("nothing requires grad")
        << false << int(BackwardOutcome::Reason::NothingRequiresGrad)
        << QString("nothing requires grad: tick a or c under requires_grad");
    QTest::newRow("over the time limit")
        << true << int(BackwardOutcome::Reason::OverTimeLimit)
        << QString(
               "; the app runs a backward estimated under 1e-09 s only: make N or M smaller "
               "to run it here");
  }
  void skippedBackwardInThePanelsWords() {
    QFETCH(bool, requiresGrad);
    QFETCH(int, reason);
    QFETCH(QString, message);
    Scenario s = Scenario::fromPreset(loadPreset("small"));
    s.config.device = DeviceKind::Cpu;
    s.config.strategies = {"direct"};
    s.config.repeats = 1;
    s.config.backward = true;
    s.config.requiresGrad.a = false;
    s.config.requiresGrad.c = requiresGrad;
    s.config.backwardLimitSeconds = 1e-9;  // every estimate is over it
    RunController controller;
    QSignalSpy finished(&controller, &RunController::finished);
    QVERIFY(controller.start(s));
    QVERIFY(controller.wait(120'000));
    QCOMPARE(finished.count(), 1);
    const auto report = finished.at(0).at(0).value<std::shared_ptr<const StrategiesReport>>();
    const BackwardOutcome& b = report->runs.at(0).backward;
    QCOMPARE(int(b.status), int(BackwardOutcome::Status::Skipped));
    QCOMPARE(int(b.reason), reason);
    const QString text = QString::fromStdString(b.message);
    QVERIFY2(text.endsWith(message), qPrintable(text));
    QVERIFY2(!text.contains("--"), qPrintable(text));
  }
};

QTEST_MAIN(TestRunMessages)
#include "test_run_messages.moc"
