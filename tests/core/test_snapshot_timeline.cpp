// snapshot::toMemoryTimeline: a PyTorch snapshot's trace read as PyTorch's viewer reads it
// (alloc adds, free_completed removes, blocks alive before the recording at time 0, reserved
// from the segments), checked on a hand-built snapshot where every counter is known, on a trace
// without times, and on a committed fixture read from its pickle.
#include "core/io/memory_snapshot.h"
#include "core/io/snapshot_timeline.h"

#include <QtTest>

using namespace matmulviz;
using namespace matmulviz::snapshot;

namespace {

constexpr int64_t MiB = 1 << 20;

/// One segment of 4 MiB on device 0 holding an active block (0x1000, 1 KiB, never in the trace)
/// and an inactive one; a trace that allocates and frees, frees a block it never allocated,
/// grows a segment and runs out of memory.
MemorySnapshot handMade(bool withTimes) {
  MemorySnapshot s;
  s.frames = {{"/home/u/train.py", 42, "forward"}};
  s.stacks = {{}, {0}};
  Segment seg;
  seg.address = 0x1000;
  seg.totalSize = 4 * MiB;
  seg.blockCount = 2;
  s.segments = {seg};
  s.blocks = {{0, 0x1000, 1024, 1000, BlockState::ActiveAllocated, 0},
              {0, 0x1400, 4 * MiB - 1024, 4 * MiB - 1024, BlockState::Inactive, 0}};
  DeviceTrace t;
  auto add = [&](TraceAction a, int64_t addr, int64_t size, int64_t us, StackId stack) {
    t.action.push_back(a);
    t.addr.push_back(addr);
    t.size.push_back(size);
    t.stream.push_back(0);
    t.timeUs.push_back(withTimes ? us : -1);
    t.stack.push_back(stack);
  };
  add(TraceAction::Alloc, 0x3000, 2048, 1000100, 1);
  add(TraceAction::FreeRequested, 0x3000, 2048, 1000110, 1);
  add(TraceAction::FreeCompleted, 0x3000, 2048, 1000120, 1);
  add(TraceAction::FreeCompleted, 0x4000, 4096, 1000130, 0);  // allocated before the trace
  add(TraceAction::Alloc, 0x5000, 8192, 1000140, 1);
  add(TraceAction::SegmentAlloc, 0x200000, 2 * MiB, 1000150, 0);
  add(TraceAction::Oom, 123, int64_t{1} << 40, 1000160, 1);
  add(TraceAction::Snapshot, 0, 0, 1000170, 0);
  s.traces = {t};
  return s;
}

}  // namespace

class TestSnapshotTimeline : public QObject {
  Q_OBJECT
 private slots:
  void countersFollowTheViewer();
  void hugeSizesClamp();
  void traceWithoutTimesUsesIndices();
  void fixtureFromPickle();
  void devices();
};

void TestSnapshotTimeline::countersFollowTheViewer() {
  const MemoryTimeline t = toMemoryTimeline(handMade(true), 0);
  using K = MemoryEventKind;
  // Reserved at the start: 4 MiB at the snapshot minus the 2 MiB segment the trace added.
  const std::vector<K> kinds{K::SegmentAlloc, K::Alloc, K::Alloc,        K::Alloc, K::Free,
                             K::Free,         K::Alloc, K::SegmentAlloc, K::Oom};
  const std::vector<int64_t> allocated{0, 4096, 5120, 7168, 5120, 1024, 9216, 9216, 9216};
  const std::vector<int64_t> reserved{2 * MiB, 2 * MiB, 2 * MiB, 2 * MiB, 2 * MiB,
                                      2 * MiB, 2 * MiB, 4 * MiB, 4 * MiB};
  const std::vector<double> times{0, 0, 0, 0, 20, 30, 40, 50, 60};
  QCOMPARE(t.events.size(), kinds.size());
  for (size_t x = 0; x < kinds.size(); ++x) {
    QCOMPARE(t.events[x].kind, kinds[x]);
    QCOMPARE(t.events[x].after.allocatedBytes, allocated[x]);
    QCOMPARE(t.events[x].after.reservedBytes, reserved[x]);
    QCOMPARE(t.events[x].timeUs, times[x]);
  }
  QCOMPARE(t.events.back().bytes, int64_t{1} << 40);  // the request that failed
  // Blocks: the freed-before-allocated one and the segment's active one at time 0, then the
  // trace's; labels from the innermost frame (file name only), ops from its function.
  QCOMPARE(t.records.size(), size_t(4));
  QCOMPARE(t.records[0].blockBytes, int64_t(4096));
  QVERIFY(!t.records[0].alive);
  QCOMPARE(t.records[1].blockBytes, int64_t(1024));
  QCOMPARE(t.records[1].requestedBytes, int64_t(1000));
  QVERIFY(t.records[1].alive);
  QCOMPARE(t.aliveWhy.at(t.records[1].id), std::string("allocated before the recording started"));
  QVERIFY(!t.aliveWhy.contains(t.records[0].id));
  QCOMPARE(t.records[2].label, std::string("train.py:42"));
  QCOMPARE(t.opNames.at(size_t(t.records[2].opId)), std::string("forward"));
  QCOMPARE(t.records[0].label, std::string("block 0x4000"));
  QVERIFY(t.records[3].alive);
}

// Sizes near 2^63 (a crafted file) clamp instead of overflowing.
void TestSnapshotTimeline::hugeSizesClamp() {
  MemorySnapshot s = handMade(true);
  s.segments[0].totalSize = std::numeric_limits<int64_t>::max();
  for (int64_t& size : s.traces[0].size) size = std::numeric_limits<int64_t>::max() - 1;
  const MemoryTimeline t = toMemoryTimeline(s, 0);
  for (const MemoryEvent& e : t.events) {
    QVERIFY(e.after.allocatedBytes >= 0);
    QVERIFY(e.after.reservedBytes >= 0);
  }
  QCOMPARE(t.events[3].after.allocatedBytes, std::numeric_limits<int64_t>::max());
}

void TestSnapshotTimeline::traceWithoutTimesUsesIndices() {
  const MemoryTimeline t = toMemoryTimeline(handMade(false), 0);
  QCOMPARE(t.events.size(), size_t(9));
  QCOMPARE(t.events[2].timeUs, 0.0);  // alive before the recording
  QCOMPARE(t.events[3].timeUs, 1.0);  // the trace's first event
  QCOMPARE(t.events[4].timeUs, 3.0);  // its third (free_completed)
}

void TestSnapshotTimeline::fixtureFromPickle() {
  const MemorySnapshot s = readMemorySnapshot(MATMULVIZ_SNAPSHOT_DIR "/snapshot_2_6_p4.pickle");
  const MemoryTimeline t = toMemoryTimeline(s, 0);
  int64_t peak = 0;
  for (const MemoryEvent& e : t.events) {
    QVERIFY(e.after.allocatedBytes >= 0);
    peak = std::max(peak, e.after.allocatedBytes);
  }
  // 512 B and 1 KiB blocks of segment 0 and the 20 MiB block of the expandable segment, alive
  // together after the 20 MiB alloc (its free was only requested).
  QCOMPARE(peak, 20 * MiB + 1536);
  QCOMPARE(t.events.back().after.allocatedBytes, 20 * MiB + 512);
  QCOMPARE(t.events.back().kind, MemoryEventKind::SegmentFree);
}

void TestSnapshotTimeline::devices() {
  MemorySnapshot s = handMade(true);
  QCOMPARE(devicesWithMemory(s), std::vector<size_t>{0});
  s.traces.push_back({});
  s.traces.push_back(s.traces[0]);
  QCOMPARE(devicesWithMemory(s), (std::vector<size_t>{0, 2}));
  const MemoryTimeline none = toMemoryTimeline(s, 5);
  QVERIFY(none.events.empty());
  // At most kMaxDevices, the first by index.
  for (int64_t d = 0; d < 100; ++d) {
    Segment seg;
    seg.device = 1000 - d;
    s.segments.push_back(seg);
  }
  const std::vector<size_t> many = devicesWithMemory(s);
  QCOMPARE(many.size(), kMaxDevices);
  QCOMPARE(many.front(), size_t(0));
}

QTEST_GUILESS_MAIN(TestSnapshotTimeline)
#include "test_snapshot_timeline.moc"
