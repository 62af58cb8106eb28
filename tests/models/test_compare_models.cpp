// The Compare window's models (ui/models/compare_memory_model.h, compare_strategies_model.h)
// under QAbstractItemModelTester, with exact numbers, and the comparison of two history runs
// (ui/models/compared_files.h): with their reports (timelines compared), and from their
// entries alone (numbers only, with a note).
#include "ui/models/compare_memory_model.h"
#include "ui/models/compare_strategies_model.h"
#include "ui/models/compared_files.h"

#include <QAbstractItemModelTester>
#include <QtTest>

using namespace matmulviz;
using namespace matmulviz::ui;

namespace {

TimelineComparison comparison() {
  TimelineComparison c;
  c.allocatedA = {5632, 3, 30}, c.allocatedB = {7168, 5, 50};
  c.reservedA = {8192, 0, 0}, c.reservedB = {8192, 0, 0};
  c.peakByLabel = {{"saved: mat2", 0, 2048}, {"out", 512, 0}, {"a", 1024, 1024}};
  c.peakByCategory = {{"saved for backward", 0, 2048}, {"outputs", 512, 0}};
  c.allocationsByLabel = {{"c[q]", 1, 2, 4096, 8192}};
  return c;
}

StrategyRun run(const char* name, int64_t maxMem, int64_t curMem, double median) {
  StrategyRun r;
  r.strategy = name;
  r.peak.allocatedBytes = maxMem;
  r.current.allocatedBytes = curMem;
  r.time.median = median;
  return r;
}

QVariant cell(const QAbstractItemModel& m, int row, int column, int role = Qt::DisplayRole) {
  return m.data(m.index(row, column), role);
}

}  // namespace

class TestCompareModels : public QObject {
  Q_OBJECT
 private slots:
  void memoryRows_data() {
    QTest::addColumn<int>("grouping");
    QTest::addColumn<int>("rows");
    QTest::addColumn<QString>("third");
    QTest::addColumn<qint64>("thirdDifference");
    QTest::newRow("label at the peak") << 0 << 5 << "saved: mat2" << qint64(2048);
    QTest::newRow("category at the peak") << 1 << 4 << "saved for backward" << qint64(2048);
    QTest::newRow("allocated over the run") << 2 << 3 << "c[q]" << qint64(4096);
  }
  void memoryRows() {
    QFETCH(int, grouping);
    QFETCH(int, rows);
    QFETCH(QString, third);
    QFETCH(qint64, thirdDifference);
    CompareMemoryModel m;
    QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(m.rowCount(), 0);
    m.setComparison(comparison());
    m.setGrouping(static_cast<CompareMemoryModel::Grouping>(grouping));
    QCOMPARE(m.rowCount(), rows);
    // The peaks on top.
    QCOMPARE(cell(m, 0, CompareMemoryModel::Name).toString(), "peak allocated");
    QCOMPARE(cell(m, 0, CompareMemoryModel::Difference, CompareMemoryModel::RawRole).toLongLong(),
             1536);
    QCOMPARE(cell(m, 0, CompareMemoryModel::Difference).toString(), "+1.5 KiB");
    QCOMPARE(cell(m, 0, CompareMemoryModel::Name, CompareMemoryModel::SignRole).toInt(), 1);
    QCOMPARE(cell(m, 1, CompareMemoryModel::Name, CompareMemoryModel::SignRole).toInt(), 0);
    QCOMPARE(cell(m, 2, CompareMemoryModel::Name).toString(), third);
    QCOMPARE(cell(m, 2, CompareMemoryModel::Difference, CompareMemoryModel::RawRole).toLongLong(),
             thirdDifference);
    if (grouping == 2) QCOMPARE(cell(m, 2, CompareMemoryModel::Blocks).toString(), "1 -> 2");
    if (grouping == 0) {
      QCOMPARE(cell(m, 3, CompareMemoryModel::Name, CompareMemoryModel::SignRole).toInt(), -1);
      QCOMPARE(cell(m, 3, CompareMemoryModel::ABytes).toString(), "512 B");
      QVERIFY(m.toCsv().contains("out,label at the peak,512,0,-512,\n"));
    }
    m.clear();
    QCOMPARE(m.rowCount(), 0);
  }
  void strategies() {
    StrategiesReport a, b;
    a.runs = {run("strategy1", 1000, 100, 0.5), run("direct", 3 << 20, 100, 0.25)};
    b.runs = {run("direct", 2 << 20, 300, 0.5)};
    CompareStrategiesModel m;
    QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
    m.setComparison(compareStrategies(a, b));
    QCOMPARE(m.rowCount(), 2);
    using C = CompareStrategiesModel;
    QCOMPARE(cell(m, 0, C::MaxMemB).toString(), "absent");
    QCOMPARE(cell(m, 0, C::MaxMemDifference).toString(), "-");
    QCOMPARE(cell(m, 0, C::MaxMemDifference, C::SignRole).toInt(), 0);
    QCOMPARE(cell(m, 1, C::MaxMemA).toString(), "3 MiB");
    QCOMPARE(cell(m, 1, C::MaxMemDifference).toString(), "-1 MiB");
    QCOMPARE(cell(m, 1, C::MaxMemDifference, C::SignRole).toInt(), -1);
    QCOMPARE(cell(m, 1, C::CurMemDifference, C::RawRole).toLongLong(), 200);
    QCOMPARE(cell(m, 1, C::CurMemDifference, C::SignRole).toInt(), 1);
    QCOMPARE(cell(m, 1, C::TimeDifference).toString(), "+250 ms");
    QCOMPARE(cell(m, 1, C::TimeA, C::RawRole).toDouble(), 0.25);
    b.runs[0].ok = false, b.runs[0].error = "out of memory";
    m.setComparison(compareStrategies(a, b));
    QCOMPARE(cell(m, 1, C::MaxMemB).toString(), "failed");
    QCOMPARE(cell(m, 1, C::MaxMemB, Qt::ToolTipRole).toString(), "B: out of memory");
    m.clear();
    QCOMPARE(m.rowCount(), 0);
  }
  void runsFromTheirEntries() {
    StrategiesReport r;
    r.workload.n = 64;
    r.runs = {run("direct", 4096, 512, 0.001)};
    r.runs[0].requiresGrad.a = true;
    RunEntry a = runEntryFromReport(r, "small", nullptr);
    a.id = 1;
    r.runs[0].peak.allocatedBytes = 8192;
    RunEntry b = runEntryFromReport(r, "", nullptr);
    b.id = 2;
    const StrategiesReport back = reportFromEntry(a);
    QCOMPARE(back.workload.n, 64);
    QVERIFY(back.runs.at(0).requiresGrad.a);
    QCOMPARE(back.runs.at(0).peak.allocatedBytes, 4096);
    const auto c = compareRuns(a, nullptr, b, nullptr);
    QCOMPARE(c->nameA, "run #1 (small)");
    QCOMPARE(c->nameB, "run #2");
    QVERIFY(c->comparison.hasStrategies);
    QCOMPARE(c->comparison.strategies.strategies.at(0).maxMemDifference(), 4096);
    QVERIFY(c->comparison.timelines.empty());
    QCOMPARE(c->comparison.notes.size(), size_t(2));
    QVERIFY(QString::fromStdString(c->comparison.notes[0]).contains("earlier session"));
  }
  void runsWithTheirReports() {
    auto report = std::make_shared<StrategiesReport>();
    report->runs = {run("direct", 4096, 512, 0.001)};
    MemoryTimeline& t = report->runs[0].timeline;
    t.records.push_back({7, "c[q]", 0, 4096, 4096, false, false, MemoryCategory::GatheredCopy});
    t.events.push_back({MemoryEventKind::Alloc, 7, 4096, 1.0, {4096, 4096, 4096}, 0});
    RunEntry a = runEntryFromReport(*report, "x", nullptr);
    a.id = 3;
    RunEntry b = a;
    b.id = 4;
    const auto c = compareRuns(a, report, b, nullptr);
    QCOMPARE(c->comparison.timelines.size(), size_t(0));  // B's timeline is not kept
    const auto both = compareRuns(a, report, b, report);
    QCOMPARE(both->comparison.timelines.size(), size_t(1));
    QCOMPARE(both->comparison.timelines[0].difference.allocatedA.bytes, 4096);
    QVERIFY(both->comparison.notes.empty());
  }
};

QTEST_GUILESS_MAIN(TestCompareModels)
#include "test_compare_models.moc"
