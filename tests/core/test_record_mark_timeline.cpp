// A Python run's timeline from its record mark on (core/report/record_mark_timeline.h): on a
// hand-built timeline, the state at the mark as a snapshot lays it out (one segment event, then
// the live blocks) and the later events with times from the mark; and on the Python run of
// tests/reference/gpu/runs/mlp_backward.json against the H200 snapshot of the same program, the
// two timelines have as many events and peak at the same one.
#include "core/io/snapshot_timeline.h"
#include "core/report/python_run.h"
#include "core/report/record_mark_timeline.h"

#include <QtTest>

using namespace matmulviz;

namespace {

MemoryEvent ev(MemoryEventKind kind, int64_t id, int64_t bytes, double us, int64_t allocated,
               int64_t reserved, int32_t op = 0) {
  return {kind, id, bytes, us, {allocated, 0, reserved}, op};
}

AllocationRecord record(int64_t id, int64_t block, int64_t requested) {
  AllocationRecord r;
  r.id = id;
  r.blockBytes = block;
  r.requestedBytes = requested;
  return r;
}

/// The index of the first event with the highest allocated bytes.
size_t peakEvent(const MemoryTimeline& t) {
  size_t peak = 0;
  for (size_t x = 0; x < t.events.size(); ++x)
    if (t.events[x].after.allocatedBytes > t.events[peak].after.allocatedBytes) peak = x;
  return peak;
}

}  // namespace

class TestRecordMarkTimeline : public QObject {
  Q_OBJECT

 private slots:
  void stateAtTheMarkThenTheRest() {
    const int64_t seg = 2 << 20;
    MemoryTimeline run;
    run.records = {record(10, 512, 400), record(11, 1024, 1000), record(12, 512, 100)};
    run.events = {ev(MemoryEventKind::SegmentAlloc, -1, seg, 1, 0, seg),
                  ev(MemoryEventKind::Alloc, 10, 512, 2, 512, seg, 1),
                  ev(MemoryEventKind::Alloc, 11, 1024, 3, 1536, seg, 2),
                  ev(MemoryEventKind::Free, 10, 512, 4, 1024, seg, 1),
                  ev(MemoryEventKind::Alloc, 12, 512, 5, 1536, seg, 3),
                  ev(MemoryEventKind::Free, 11, 1024, 6, 512, seg, 2)};
    run.spans = {{1, 0, 2.0, 3.0}, {3, 0, 4.5, 6.0}};
    const MemoryTimeline t = timelineFromEvent(run, 4);
    QCOMPARE(t.events.size(), size_t(4));
    QCOMPARE(t.events[0].kind, MemoryEventKind::SegmentAlloc);
    QCOMPARE(t.events[0].bytes, seg);
    QCOMPARE(t.events[0].after.reservedBytes, seg);
    // Block 11 was alive at the mark: an Alloc at time 0, with its op and both counters.
    QCOMPARE(t.events[1].kind, MemoryEventKind::Alloc);
    QCOMPARE(t.events[1].allocationId, int64_t(11));
    QCOMPARE(t.events[1].opId, 2);
    QCOMPARE(t.events[1].timeUs, 0.0);
    QCOMPARE(t.events[1].after.allocatedBytes, int64_t(1024));
    QCOMPARE(t.events[1].after.requestedBytes, int64_t(1000));
    QCOMPARE(t.events[1].after.reservedBytes, seg);
    // Then the events from the mark on, their times from the first of them.
    QCOMPARE(t.events[2].allocationId, int64_t(12));
    QCOMPARE(t.events[2].timeUs, 0.0);
    QCOMPARE(t.events[3].kind, MemoryEventKind::Free);
    QCOMPARE(t.events[3].timeUs, 1.0);
    QCOMPARE(t.events[3].after.allocatedBytes, int64_t(512));
    QCOMPARE(t.records.size(), size_t(3));
    QCOMPARE(t.spans.size(), size_t(1));  // the op that ended before the mark is gone
    QCOMPARE(t.spans[0].beginUs, 0.0);
    QCOMPARE(t.spans[0].endUs, 1.0);
    // From the start: the same events; past the end: the state at the end and nothing after.
    QCOMPARE(timelineFromEvent(run, 0).events.size(), run.events.size());
    const MemoryTimeline end = timelineFromEvent(run, 99);
    QCOMPARE(end.events.size(), size_t(2));  // the segment and block 12
    QCOMPARE(end.events[1].allocationId, int64_t(12));
  }

  void noMarkNoTimeline() {
    PythonReport report;
    QVERIFY(!recordMarkStart(report));
    report.marks.push_back({1.0, "something else", 3});
    QVERIFY(!timelineFromRecordMark(report, MemoryTimeline{}));
  }

  void runAndSnapshotShareTheirEventNumbers() {
    const PythonReport report = readPythonReportFile(MATMULVIZ_GPU_DIR "/runs/mlp_backward.json");
    const MemoryTimeline whole = pythonRunFromReport(report).timeline;
    const std::optional<MemoryTimeline> run = timelineFromRecordMark(report, whole);
    QVERIFY(run);
    QVERIFY(run->events.size() < whole.events.size());  // the warm-up before the mark is gone
    const snapshot::MemorySnapshot snap =
        snapshot::readMemorySnapshot(MATMULVIZ_GPU_DIR "/snapshots/mlp_backward.pickle");
    const MemoryTimeline real = snapshot::toMemoryTimeline(snap, 0);
    QCOMPARE(run->events.size(), real.events.size());
    QCOMPARE(peakEvent(*run), peakEvent(real));
    // Both start with the memory reserved before the recording, then the blocks alive then.
    QCOMPARE(run->events[0].kind, MemoryEventKind::SegmentAlloc);
    QCOMPARE(run->events[0].after.reservedBytes, real.events[0].after.reservedBytes);
  }
};

QTEST_GUILESS_MAIN(TestRecordMarkTimeline)
#include "test_record_mark_timeline.moc"
