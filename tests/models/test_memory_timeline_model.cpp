// MemoryTimelineModel on real timelines of the small preset: one row per allocator event, the
// series match the events, categories sum to memory_allocated at every event, the peak is the
// run's maxMem; the category rule; CSV. Under QAbstractItemModelTester.

#include "tests/models/strategies_fixture.h"
#include "ui/models/memory_timeline_model.h"

#include "core/memory/caching_allocator.h"
#include "core/util/format_units.h"

#include <QAbstractItemModelTester>
#include <QtTest/QtTest>

using namespace matmulviz;
using namespace matmulviz::ui;

Q_DECLARE_METATYPE(matmulviz::ui::MemoryCategory)

class TestMemoryTimelineModel : public QObject {
  Q_OBJECT
 private slots:
  void seriesMatchTheEvents_data();
  void seriesMatchTheEvents();
  void savedCopyIsSavedForBackward();
  void backwardComesAfterTheStatementEnd();
  void onePeakWithBackward_data();
  void onePeakWithBackward();
  void categoryRule_data();
  void categoryRule();
  void csvAndClear();
};

void TestMemoryTimelineModel::seriesMatchTheEvents_data() {
  QTest::addColumn<QString>("strategy");
  QTest::addColumn<bool>("gradA");
  for (const char* s : {"strategy1", "strategy2", "strategy3", "direct", "fused"}) {
    QTest::addRow("%s, no grad", s) << QString(s) << false;
    QTest::addRow("%s, a requires grad", s) << QString(s) << true;
  }
}

void TestMemoryTimelineModel::seriesMatchTheEvents() {
  QFETCH(QString, strategy);
  QFETCH(bool, gradA);
  const StrategiesReport report =
      testing::runSmall({DeviceKind::Meta, gradA, false, false, {strategy.toStdString()}});
  const StrategyRun& run = report.runs.at(0);
  MemoryTimelineModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  model.setTimeline(run.timeline, strategy);
  const int n = int(run.timeline.events.size());
  QVERIFY(n > 0);
  QCOMPARE(model.rowCount(), n);
  QCOMPARE(model.eventCount(), n);
  QCOMPARE(model.strategy(), strategy);
  qint64 peak = 0;
  for (int i = 0; i < n; ++i) {
    const MemoryEvent& ev = run.timeline.events[size_t(i)];
    QCOMPARE(model.allocatedSeries()[i], qint64(ev.after.allocatedBytes));
    QCOMPARE(model.requestedSeries()[i], qint64(ev.after.requestedBytes));
    QCOMPARE(model.reservedSeries()[i], qint64(ev.after.reservedBytes));
    qint64 sum = 0;
    for (int c = 0; c < kMemoryCategoryCount; ++c)
      sum += model.categorySeries(MemoryCategory(c))[i];
    QCOMPARE(sum, model.allocatedSeries()[i]);
    peak = std::max<qint64>(peak, ev.after.allocatedBytes);
  }
  QCOMPARE(model.peakAllocatedBytes(), peak);
  QCOMPARE(model.peakAllocatedBytes(), qint64(run.peak.allocatedBytes));  // maxMem
  QCOMPARE(model.allocatedSeries()[model.peakEvent()], peak);
  const QModelIndex op = model.index(model.peakEvent(), MemoryTimelineModel::Op);
  QCOMPARE(op.data().toString(), model.opAt(model.peakEvent()));
  QVERIFY(!model.opAt(model.peakEvent()).isEmpty());
  QVERIFY(model.tooltipAt(model.peakEvent()).contains(model.opAt(model.peakEvent())));
}

void TestMemoryTimelineModel::savedCopyIsSavedForBackward() {
  // direct with a requiring grad: c[q] is saved as mat2 of BmmBackward0 (the seed's 2 GiB).
  const StrategiesReport report =
      testing::runSmall({DeviceKind::Meta, true, false, false, {"direct"}});
  MemoryTimelineModel model;
  model.setTimeline(report.runs[0].timeline, "direct");
  bool found = false;
  for (int i = 0; i < model.eventCount(); ++i) {
    if (model.labelAt(i) != "c[q]") continue;
    found = true;
    QCOMPARE(model.index(i, MemoryTimelineModel::Category).data().toString(),
             QString("saved for backward"));
    QVERIFY2(model.whyAliveAt(i).contains("BmmBackward0"), qPrintable(model.whyAliveAt(i)));
  }
  QVERIFY(found);
  const auto& saved = model.categorySeries(MemoryCategory::SavedForBackward);
  QVERIFY(saved.back() > 0);
}

void TestMemoryTimelineModel::backwardComesAfterTheStatementEnd() {
  const StrategiesReport report =
      testing::runSmall({DeviceKind::Meta, true, true, true, {"strategy3"}});
  MemoryTimelineModel model;
  model.setTimeline(report.runs[0].timeline, "strategy3");
  QVERIFY(model.statementEndEvent() > 0);
  QVERIFY(model.statementEndEvent() < model.eventCount());
  const auto& grads = model.categorySeries(MemoryCategory::Gradients);
  QCOMPARE(grads[model.statementEndEvent() - 1], qint64(0));
  QVERIFY(*std::max_element(grads.begin(), grads.end()) > 0);
  // Backward ops' outputs count as gradients: outputs and other stop growing after the end.
  for (MemoryCategory c : {MemoryCategory::Outputs, MemoryCategory::Other}) {
    const auto& series = model.categorySeries(c);
    const qint64 atEnd = series[model.statementEndEvent() - 1];
    for (int e = model.statementEndEvent(); e < model.eventCount(); ++e)
      QVERIFY2(series[e] <= atEnd, qPrintable(memoryCategoryName(c)));
  }
}

void TestMemoryTimelineModel::onePeakWithBackward_data() {
  QTest::addColumn<QString>("strategy");
  QTest::addColumn<bool>("backward");
  for (const char* s : {"strategy1", "strategy3", "direct", "fused"}) {
    QTest::addRow("%s, forward only", s) << QString(s) << false;
    QTest::addRow("%s, with backward", s) << QString(s) << true;
  }
}

void TestMemoryTimelineModel::onePeakWithBackward() {
  // The header and the chart both show peakText(): the peak of the whole timeline, its value
  // paired with its own event (issue: the forward peak's value with the backward peak's event).
  QFETCH(QString, strategy);
  QFETCH(bool, backward);
  const StrategiesReport report =
      testing::runSmall({DeviceKind::Meta, true, false, backward, {strategy.toStdString()}});
  const StrategyRun& run = report.runs.at(0);
  MemoryTimelineModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  model.setTimeline(run.timeline, strategy);
  const auto& allocated = model.allocatedSeries();
  const auto top = std::max_element(allocated.begin(), allocated.end());
  QCOMPARE(model.peakEvent(), int(top - allocated.begin()));
  QCOMPARE(model.peakAllocatedBytes(), *top);
  // maxMem is the statement's peak, before backward.
  QCOMPARE(model.statementPeakBytes(), qint64(run.peak.allocatedBytes));
  const int end = backward ? model.statementEndEvent() : model.eventCount();
  QVERIFY(end > 0);
  QCOMPARE(model.statementPeakEvent(),
           int(std::max_element(allocated.begin(), allocated.begin() + end) - allocated.begin()));
  const QString text = model.peakText();
  QVERIFY2(text.startsWith(QString::fromStdString(formatSize(*top)) +
                           QStringLiteral(" at event %1 (op ").arg(model.peakEvent())),
           qPrintable(text));
  QCOMPARE(text.contains("during backward"), backward && model.peakEvent() >= end);
  if (!backward) QCOMPARE(model.statementPeakEvent(), model.peakEvent());
}

void TestMemoryTimelineModel::categoryRule_data() {
  QTest::addColumn<QString>("label");
  QTest::addColumn<QString>("why");
  QTest::addColumn<MemoryCategory>("category");
  QTest::newRow("input a") << "a"
                           << "input a, held by the caller" << MemoryCategory::Inputs;
  QTest::newRow("q on the device") << "index copied to the device"
                                   << "" << MemoryCategory::Inputs;
  QTest::newRow("c[q] freed") << "c[q]"
                              << "" << MemoryCategory::GatheredCopy;
  QTest::newRow("c[q] saved") << "c[q]"
                              << "saved as mat2 of BmmBackward0 because a requires grad"
                              << MemoryCategory::SavedForBackward;
  QTest::newRow("batch gather") << "c[q[i*b:i*b+b]]"
                                << "" << MemoryCategory::GatheredCopy;
  QTest::newRow("out") << "out"
                       << "the output" << MemoryCategory::Outputs;
  QTest::newRow("bmm output") << "bmm output"
                              << "" << MemoryCategory::Outputs;
  QTest::newRow("loop results") << "matmul per batch results"
                                << "" << MemoryCategory::Outputs;
  QTest::newRow("grad of c") << "grad of c"
                             << "" << MemoryCategory::Gradients;
  QTest::newRow("grad_output") << "grad_output"
                               << "" << MemoryCategory::Gradients;
  QTest::newRow("dA") << "dA"
                      << "" << MemoryCategory::Gradients;
  QTest::newRow("clone") << "clone of a"
                         << "" << MemoryCategory::Other;
}

void TestMemoryTimelineModel::categoryRule() {
  QFETCH(QString, label);
  QFETCH(QString, why);
  QFETCH(MemoryCategory, category);
  QCOMPARE(memoryCategoryOf(label.toStdString(), why.toStdString()), category);
}

void TestMemoryTimelineModel::csvAndClear() {
  const StrategiesReport report =
      testing::runSmall({DeviceKind::Meta, false, false, false, {"fused"}});
  MemoryTimelineModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  model.setTimeline(report.runs[0].timeline, "fused");
  const QStringList lines = model.toCsv().split('\n', Qt::SkipEmptyParts);
  QCOMPARE(lines.size(), model.eventCount() + 1);
  QVERIFY(lines[0].startsWith("event,time_us,op,kind,label,category,bytes,allocated_bytes"));
  QVERIFY(lines[1].startsWith("0,"));
  model.clear();
  QCOMPARE(model.rowCount(), 0);
  QCOMPARE(model.peakEvent(), -1);
  QCOMPARE(model.tooltipAt(0), QString());
}

QTEST_GUILESS_MAIN(TestMemoryTimelineModel)
#include "test_memory_timeline_model.moc"
