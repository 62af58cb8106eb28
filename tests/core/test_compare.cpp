// The difference of two memory timelines and two strategies reports (core/report/compare.h),
// the pairing of two files (compare_reports.h), and their JSON and text (compare_json.h,
// compare_text.h), with exact numbers on hand-built timelines.
#include "core/report/compare.h"
#include "core/report/compare_json.h"
#include "core/report/compare_reports.h"
#include "core/report/compare_text.h"

#include <QtTest>

#include <sstream>

using namespace matmulviz;

namespace {

using K = MemoryEventKind;
using C = MemoryCategory;

struct Builder {
  MemoryTimeline t;
  int64_t allocated = 0, reserved = 0;
  Builder& record(int64_t id, const char* label, C category, int64_t bytes) {
    AllocationRecord r;
    r.id = id, r.label = label, r.category = category, r.blockBytes = bytes;
    t.records.push_back(r);
    return *this;
  }
  Builder& event(K kind, int64_t id, int64_t bytes) {
    if (kind == K::Alloc) allocated += bytes;
    if (kind == K::Free) allocated -= bytes;
    if (kind == K::SegmentAlloc) reserved += bytes;
    if (kind == K::SegmentFree) reserved -= bytes;
    const MemoryCounters after{allocated, allocated, reserved};
    t.events.push_back({kind, id, bytes, 10.0 * double(t.events.size()), after, 0});
    return *this;
  }
};

/// A: a, c[q] and out alive at the peak (event 3); B: a second c[q] block and a saved tensor,
/// its peak at event 5.
MemoryTimeline timelineA() {
  Builder b;
  b.record(1, "a", C::Inputs, 1024)
      .record(2, "c[q]", C::GatheredCopy, 4096)
      .record(3, "out", C::Outputs, 512);
  b.event(K::SegmentAlloc, -1, 8192)
      .event(K::Alloc, 1, 1024)
      .event(K::Alloc, 2, 4096)
      .event(K::Alloc, 3, 512)
      .event(K::Free, 2, 4096);
  return b.t;
}

MemoryTimeline timelineB() {
  Builder b;
  b.record(1, "a", C::Inputs, 1024)
      .record(2, "c[q]", C::GatheredCopy, 4096)
      .record(3, "c[q]", C::GatheredCopy, 4096)
      .record(4, "saved: mat2", C::SavedForBackward, 2048);
  b.event(K::SegmentAlloc, -1, 16384)
      .event(K::Alloc, 1, 1024)
      .event(K::Alloc, 2, 4096)
      .event(K::Free, 2, 4096)
      .event(K::Alloc, 3, 4096)
      .event(K::Alloc, 4, 2048)
      .event(K::Free, 3, 4096);
  return b.t;
}

StrategyRun run(const char* name, int64_t maxMem, int64_t curMem, double median) {
  StrategyRun r;
  r.strategy = name;
  r.peak.allocatedBytes = maxMem;
  r.current.allocatedBytes = curMem;
  r.time.median = median;
  return r;
}

QString names(const std::vector<BytesDiff>& rows) {
  QStringList out;
  for (const BytesDiff& d : rows)
    out << QStringLiteral("%1 %2 %3").arg(QString::fromStdString(d.name)).arg(d.a).arg(d.b);
  return out.join("; ");
}

}  // namespace

class TestCompare : public QObject {
  Q_OBJECT
 private slots:
  void peaks() {
    const TimelineComparison c = compareTimelines(timelineA(), timelineB());
    QCOMPARE(c.allocatedA.bytes, 5632);
    QCOMPARE(c.allocatedA.event, 3);
    QCOMPARE(c.allocatedA.timeUs, 30.0);
    QCOMPARE(c.allocatedB.bytes, 7168);
    QCOMPARE(c.allocatedB.event, 5);  // not event 2 or 4 (5120, below the peak)
    QCOMPARE(c.reservedA.bytes, 8192);
    QCOMPARE(c.reservedA.event, 0);
    QCOMPARE(c.reservedB.bytes, 16384);
    QCOMPARE(c.eventsA, 5);
    QCOMPARE(c.eventsB, 7);
  }
  void peakByLabelSortedByDifference() {
    const TimelineComparison c = compareTimelines(timelineA(), timelineB());
    // saved: +2048, out: -512, then the unchanged ones by name.
    QCOMPARE(names(c.peakByLabel), "saved: mat2 0 2048; out 512 0; a 1024 1024; c[q] 4096 4096");
    QCOMPARE(c.peakByLabel[1].difference(), -512);
    int64_t sumA = 0, sumB = 0;
    for (const BytesDiff& d : c.peakByLabel) sumA += d.a, sumB += d.b;
    QCOMPARE(sumA, c.allocatedA.bytes);
    QCOMPARE(sumB, c.allocatedB.bytes);
  }
  void peakByCategory() {
    const TimelineComparison c = compareTimelines(timelineA(), timelineB());
    QCOMPARE(names(c.peakByCategory),
             "saved for backward 0 2048; outputs 512 0; gathered copy 4096 4096; "
             "inputs 1024 1024");
  }
  void allocationsOverTheRun() {
    const TimelineComparison c = compareTimelines(timelineA(), timelineB());
    QCOMPARE(c.allocationsByLabel.size(), size_t(4));
    const AllocationsDiff& first = c.allocationsByLabel[0];
    QCOMPARE(first.label, "c[q]");
    QCOMPARE(first.countA, 1);
    QCOMPARE(first.countB, 2);
    QCOMPARE(first.bytesA, 4096);
    QCOMPARE(first.bytesB, 8192);
    QCOMPARE(first.difference(), 4096);
    QCOMPARE(c.allocationsByLabel[1].label, "saved: mat2");
    QCOMPARE(c.allocationsByLabel[2].label, "out");
    QCOMPARE(c.allocationsByLabel[3].label, "a");
  }
  void emptyAndUnknown() {
    Builder b;
    b.event(K::Alloc, 99, 512);  // no record of id 99
    const TimelineComparison c = compareTimelines(MemoryTimeline{}, b.t);
    QCOMPARE(c.allocatedA.event, -1);
    QCOMPARE(c.allocatedA.bytes, 0);
    QCOMPARE(names(c.peakByLabel), "(unknown) 0 512");
    QCOMPARE(names(c.peakByCategory), "other 0 512");
  }
  void strategiesMatchedByName() {
    StrategiesReport a, b;
    a.runs = {run("strategy1", 1000, 100, 0.5), run("direct", 3000, 100, 0.25)};
    b.runs = {run("direct", 2000, 300, 0.5), run("fused", 500, 100, 0.1)};
    b.runs[0].requiresGrad.a = true;
    b.workload.n = 8;
    const StrategiesComparison c = compareStrategies(a, b);
    QCOMPARE(c.strategies.size(), size_t(3));
    QCOMPARE(c.strategies[0].strategy, "strategy1");
    QVERIFY(c.strategies[0].inA && !c.strategies[0].inB);
    const StrategyDiff& direct = c.strategies[1];
    QCOMPARE(direct.maxMemDifference(), -1000);
    QCOMPARE(direct.curMemDifference(), 200);
    QCOMPARE(direct.timeDifference(), 0.25);
    QVERIFY(!c.strategies[2].inA && c.strategies[2].inB);
    QVERIFY(std::isnan(c.strategies[2].timeA));
    QCOMPARE(c.setupDifferences.size(), size_t(2));
    QCOMPARE(c.setupDifferences[1], "requires_grad: none -> a");
    QVERIFY(c.setupDifferences[0].rfind("workload: n 131072, ", 0) == 0);
  }
  void failedAndMetaRuns() {
    StrategiesReport a, b;
    a.runs = {run("direct", 3000, 100, 0.25)};
    b.runs = {run("direct", 0, 0, 0)};
    b.runs[0].ok = false, b.runs[0].error = "out of memory";
    a.device = DeviceKind::Meta;
    const StrategyDiff d = compareStrategies(a, b).strategies.at(0);
    QVERIFY(std::isnan(d.timeA));  // the meta device measures no time
    QVERIFY(!d.okB);
    QCOMPARE(d.errorB, "out of memory");
    QCOMPARE(d.maxMemB, 0);
  }
  void pairsAndNotes() {
    StrategiesReport ra, rb;
    ra.runs = {run("direct", 1, 1, 1), run("fused", 1, 1, 1)};
    rb.runs = {run("direct", 1, 1, 1)};
    ra.runs[0].timeline = timelineA();
    ra.runs[1].timeline = timelineA();
    const MemoryTimeline tb = timelineB();
    // A strategies report without timelines beside one with: strategies compared, and a note
    // saying what to rerun.
    const ReportComparison c = compareReports(
        {"a.json", &ra, {{"direct", &ra.runs[0].timeline}, {"fused", &ra.runs[1].timeline}}},
        {"b.json", &rb, {}});
    QVERIFY(c.hasStrategies);
    QVERIFY(c.timelines.empty());
    QCOMPARE(c.notes.size(), size_t(1));
    QVERIFY(c.notes[0].find("'b.json' has no memory timeline: rerun it with `matmulviz-cli "
                            "strategies ... --json b.json --timeline") == 0);
    // Names in common pair; one timeline on each side pairs whatever its name.
    const ReportComparison same =
        compareReports({"a.json", &ra, {{"direct", &ra.runs[0].timeline}}},
                       {"b.json", nullptr, {{"run.json", &tb}}});
    QCOMPARE(same.timelines.size(), size_t(1));
    QCOMPARE(same.timelines[0].name, "direct vs run.json");
    QCOMPARE(same.timelines[0].difference.allocatedB.bytes, 7168);
    QVERIFY(!same.hasStrategies);
  }
  void nothingToCompare() {
    StrategiesReport ra;
    ra.runs = {run("direct", 1, 1, 1)};
    const MemoryTimeline tb = timelineB();
    try {
      compareReports({"a.json", &ra, {}}, {"run.json", nullptr, {{"run.json", &tb}}});
      QFAIL("no CompareError");
    } catch (const CompareError& e) {
      const std::string what = e.what();
      QVERIFY2(what.find("'a.json' and 'run.json'") != std::string::npos, e.what());
      QVERIFY2(what.find("--timeline") != std::string::npos, e.what());
    }
  }
  void json() {
    const MemoryTimeline ta = timelineA(), tb = timelineB();
    const ReportComparison c =
        compareReports({"a.json", nullptr, {{"x", &ta}}}, {"b.json", nullptr, {{"x", &tb}}});
    const auto j = compareToJson(c);
    QCOMPARE(j["format"], "matmulviz-report");
    QCOMPARE(j["kind"], "compare");
    QVERIFY(j["strategies"].is_null());
    const auto& t = j["timelines"][0];
    QCOMPARE(t["peak_allocated"]["difference_bytes"].get<int64_t>(), 1536);
    QCOMPARE(t["peak_allocated"]["b"]["event"].get<int64_t>(), 5);
    QCOMPARE(t["peak_by_label"][0]["name"], "saved: mat2");
    QCOMPARE(t["peak_by_label"][0]["difference"].get<int64_t>(), 2048);
    QCOMPARE(t["allocations_by_label"][0]["count_b"].get<int64_t>(), 2);
  }
  void text() {
    QCOMPARE(formatSizeDifference(2048), "+2 KiB");
    QCOMPARE(formatSizeDifference(-512), "-512 B");
    QCOMPARE(formatSizeDifference(0), "0 B");
    QCOMPARE(formatSecondsDifference(-0.00125), "-1.25 ms");
    QCOMPARE(formatSecondsDifference(std::nan("")), "-");
    const MemoryTimeline ta = timelineA(), tb = timelineB();
    std::ostringstream os;
    writeCompareText(
        os, compareReports({"a.json", nullptr, {{"x", &ta}}}, {"b.json", nullptr, {{"x", &tb}}}));
    const std::string s = os.str();
    QVERIFY2(s.find("peak allocated               5.5 KiB @3       7 KiB @5     +1.5 KiB") !=
                 std::string::npos,
             s.c_str());
    QVERIFY2(s.find("c[q] (1 -> 2)") != std::string::npos, s.c_str());
  }
};

QTEST_GUILESS_MAIN(TestCompare)
#include "test_compare.moc"
