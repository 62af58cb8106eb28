// snapshot::stateAfter and AllocatorHistory: the allocator's segments and blocks after any trace
// event, as PyTorch's memory_viz "Allocator State History" undoes the trace from the snapshot.
// Exact segments and blocks at chosen events of hand-built snapshots (blocks allocated, freed
// and pending, a block alive before the recording, an expandable segment mapped, unmapped and
// cut in the middle), damaged traces (notes, no crash), the last state against the snapshot's
// own segments, checkpoints against a full replay, and timeline rows against trace events.
#include "core/io/allocator_history.h"
#include "core/io/allocator_state.h"
#include "core/io/snapshot_timeline.h"
#include "tests/common/snapshot_generator.h"

#include <QTemporaryDir>
#include <QtTest>

#include <random>

using namespace matmulviz;
using namespace matmulviz::snapshot;

namespace {

constexpr int64_t MiB = 1 << 20;
constexpr BlockState A = BlockState::ActiveAllocated;
constexpr BlockState P = BlockState::ActivePendingFree;
constexpr BlockState I = BlockState::Inactive;

struct B {  // expected block: address, size, state
  int64_t address, size;
  BlockState state;
};
struct S {  // expected segment: address, size
  int64_t address, size;
};

void add(DeviceTrace& t, TraceAction a, int64_t addr, int64_t size, StackId stack = 0) {
  t.action.push_back(a);
  t.addr.push_back(addr);
  t.size.push_back(size);
  t.stream.push_back(0);
  t.timeUs.push_back(-1);
  t.stack.push_back(stack);
}

void addSegment(MemorySnapshot& s, int64_t address, int64_t size, bool expandable,
                const std::vector<Block>& blocks) {
  Segment seg;
  seg.address = address;
  seg.totalSize = size;
  seg.large = size != 2 * MiB;
  seg.expandable = expandable;
  seg.firstBlock = uint32_t(s.blocks.size());
  seg.blockCount = uint32_t(blocks.size());
  for (Block b : blocks) {
    b.segment = uint32_t(s.segments.size());
    s.blocks.push_back(b);
  }
  s.segments.push_back(seg);
}

/// A 2 MiB small segment allocated in the trace: blocks allocated, one freed at once, one whose
/// free stays pending, and one alive before the recording (freed in the trace, never allocated).
MemorySnapshot smallSegment() {
  MemorySnapshot s;
  s.frames = {{"/w/train.py", 7, "step"}};
  s.stacks = {{}, {0}};
  const int64_t base = 0x100000;
  addSegment(s, base, 2 * MiB, false,
             {{0, base, 512, 500, A, 1},
              {0, base + 512, 1536, 1536, I, 0},
              {0, base + 2048, 4096, 4000, P, 1},
              {0, base + 6144, 2 * MiB - 6144, 0, I, 0}});
  DeviceTrace t;
  add(t, TraceAction::FreeRequested, base + 512, 1024);      // 0: alive before the recording
  add(t, TraceAction::FreeCompleted, base + 512, 1024);      // 1
  add(t, TraceAction::SegmentAlloc, 0x900000, 2 * MiB);      // 2: a second segment
  add(t, TraceAction::Alloc, base, 500, 1);                  // 3
  add(t, TraceAction::Alloc, base + 2048, 4000, 1);          // 4
  add(t, TraceAction::FreeRequested, base + 2048, 4000, 1);  // 5: stays pending
  add(t, TraceAction::SegmentFree, 0x900000, 2 * MiB);       // 6
  add(t, TraceAction::Snapshot, 0, 0);                       // 7
  s.traces = {t};
  return s;
}

/// An expandable segment of 4 MiB at the snapshot, grown by segment_map and shrunk by
/// segment_unmap in the trace, and a 6 MiB one whose middle was mapped last.
MemorySnapshot expandable() {
  MemorySnapshot s;
  s.stacks = {{}};
  const int64_t e = 0x2000000, f = 0x4000000;
  addSegment(s, e, 4 * MiB, true, {{0, e, MiB, MiB, A, 0}, {0, e + MiB, 3 * MiB, 0, I, 0}});
  addSegment(s, f, 6 * MiB, true, {{0, f, 6 * MiB, 0, I, 0}});
  DeviceTrace t;
  add(t, TraceAction::SegmentMap, e, 2 * MiB);              // 0
  add(t, TraceAction::Alloc, e, MiB);                       // 1
  add(t, TraceAction::SegmentMap, e + 2 * MiB, 2 * MiB);    // 2
  add(t, TraceAction::Alloc, e + 2 * MiB, MiB);             // 3
  add(t, TraceAction::FreeRequested, e + 2 * MiB, MiB);     // 4
  add(t, TraceAction::FreeCompleted, e + 2 * MiB, MiB);     // 5
  add(t, TraceAction::SegmentUnmap, e + 2 * MiB, 2 * MiB);  // 6
  add(t, TraceAction::SegmentMap, e + 2 * MiB, 2 * MiB);    // 7
  add(t, TraceAction::SegmentMap, f + 2 * MiB, 2 * MiB);    // 8: the middle of f
  s.traces = {t};
  return s;
}

void expectState(const AllocatorState& st, const std::vector<S>& segments,
                 const std::vector<B>& blocks) {
  QCOMPARE(st.segments.size(), segments.size());
  for (size_t i = 0; i < segments.size(); ++i) {
    QCOMPARE(st.segments[i].address, segments[i].address);
    QCOMPARE(st.segments[i].size, segments[i].size);
  }
  QCOMPARE(st.blocks.size(), blocks.size());
  for (size_t i = 0; i < blocks.size(); ++i) {
    QCOMPARE(st.blocks[i].address, blocks[i].address);
    QCOMPARE(st.blocks[i].size, blocks[i].size);
    QCOMPARE(stateName(st.blocks[i].state), stateName(blocks[i].state));
  }
}

void expectSame(const AllocatorState& a, const AllocatorState& b) {
  QCOMPARE(a.event, b.event);
  QCOMPARE(a.segments.size(), b.segments.size());
  for (size_t i = 0; i < a.segments.size(); ++i) {
    QCOMPARE(a.segments[i].address, b.segments[i].address);
    QCOMPARE(a.segments[i].size, b.segments[i].size);
    QCOMPARE(a.segments[i].expandable, b.segments[i].expandable);
    QCOMPARE(a.segments[i].fromTrace, b.segments[i].fromTrace);
  }
  QCOMPARE(a.blocks.size(), b.blocks.size());
  for (size_t i = 0; i < a.blocks.size(); ++i) {
    QCOMPARE(a.blocks[i].address, b.blocks[i].address);
    QCOMPARE(a.blocks[i].size, b.blocks[i].size);
    QCOMPARE(a.blocks[i].requestedSize, b.blocks[i].requestedSize);
    QCOMPARE(a.blocks[i].state, b.blocks[i].state);
    QCOMPARE(a.blocks[i].segment, b.blocks[i].segment);
  }
  QVERIFY(a.problems == b.problems);
  QCOMPARE(a.reservedBytes, b.reservedBytes);
  QCOMPARE(a.activeBytes, b.activeBytes);
}

/// Every segment and block of `device` in the snapshot, as the state lists them.
void expectSnapshot(const AllocatorState& st, const MemorySnapshot& s, size_t device) {
  std::vector<S> segments;
  std::vector<B> blocks;
  for (const Segment& seg : s.segments) {
    if (seg.device != int64_t(device)) continue;
    segments.push_back({seg.address, seg.totalSize});
    for (uint32_t b = seg.firstBlock; b < seg.firstBlock + seg.blockCount; ++b) {
      const Block& block = s.blocks[b];
      blocks.push_back({block.address, block.size,
                        block.state == BlockState::ActiveAwaitingFree ? P : block.state});
    }
  }
  expectState(st, segments, blocks);
}

}  // namespace

class TestAllocatorState : public QObject {
  Q_OBJECT
 private slots:
  void blocksOfASmallSegment();
  void totals();
  void expandableSegments();
  void lastStateIsTheSnapshot();
  void damagedTraceGivesNotes();
  void checkpointsMatchAFullReplay_data();
  void checkpointsMatchAFullReplay();
  void checkpointBudgetThins();
  void timelineRowsMapToTraceEvents();
  void simulatedAllocatorReplaysCleanly();
};

void TestAllocatorState::blocksOfASmallSegment() {
  const MemorySnapshot s = smallSegment();
  const int64_t b = 0x100000, end = b + 2 * MiB;
  // Before the trace: the block freed at events 0 and 1 is allocated (its requested size, 1024,
  // is all the trace knows), nothing else.
  expectState(stateAfter(s, 0, -1), {{b, 2 * MiB}},
              {{b, 512, I}, {b + 512, 1024, A}, {b + 1536, 2 * MiB - 1536, I}});
  expectState(stateAfter(s, 0, 0), {{b, 2 * MiB}},
              {{b, 512, I}, {b + 512, 1024, P}, {b + 1536, 2 * MiB - 1536, I}});
  expectState(stateAfter(s, 0, 1), {{b, 2 * MiB}}, {{b, 2 * MiB, I}});
  expectState(stateAfter(s, 0, 2), {{b, 2 * MiB}, {0x900000, 2 * MiB}},
              {{b, 2 * MiB, I}, {0x900000, 2 * MiB, I}});
  // The snapshot's block sizes (512, 4096) from here on: the block is the snapshot's own.
  expectState(stateAfter(s, 0, 3), {{b, 2 * MiB}, {0x900000, 2 * MiB}},
              {{b, 512, A}, {b + 512, 2 * MiB - 512, I}, {0x900000, 2 * MiB, I}});
  const std::vector<B> four{
      {b, 512, A}, {b + 512, 1536, I}, {b + 2048, 4096, A}, {b + 6144, end - b - 6144, I}};
  expectState(stateAfter(s, 0, 4), {{b, 2 * MiB}, {0x900000, 2 * MiB}},
              {four[0], four[1], four[2], four[3], {0x900000, 2 * MiB, I}});
  expectState(stateAfter(s, 0, 5), {{b, 2 * MiB}, {0x900000, 2 * MiB}},
              {four[0], four[1], {b + 2048, 4096, P}, four[3], {0x900000, 2 * MiB, I}});
  expectState(stateAfter(s, 0, 6), {{b, 2 * MiB}},
              {four[0], four[1], {b + 2048, 4096, P}, four[3]});
  QCOMPARE(stateAfter(s, 0, 6).segments[0].large, false);
  const AllocatorState before = stateAfter(s, 0, 2);
  QVERIFY(before.segments[1].fromTrace);
  QVERIFY(!before.segments[1].large);  // 2 MiB, not expandable: a small-pool segment
  QCOMPARE(before.blocks.size(), size_t(2));
  for (int64_t e = -1; e < 8; ++e) QVERIFY(stateAfter(s, 0, e).notes().empty());
  QCOMPARE(stateAfter(s, 0, 99).event, int64_t(7));  // clamped to the last event
  QCOMPARE(stateAfter(s, 0, -5).event, int64_t(-1));
}

void TestAllocatorState::totals() {
  const AllocatorState st = stateAfter(smallSegment(), 0, 5);
  QCOMPARE(st.reservedBytes, 4 * MiB);
  QCOMPARE(st.allocatedBytes, int64_t(512));
  QCOMPARE(st.activeBytes, int64_t(512 + 4096));
  QCOMPARE(st.requestedBytes, int64_t(500 + 4000));
  QCOMPARE(st.inactiveBytes, 4 * MiB - 512 - 4096);
  QCOMPARE(st.largestInactive, 2 * MiB);
  QCOMPARE(st.fragmentation(), 1.0 - double(2 * MiB) / double(4 * MiB - 4608));
  QCOMPARE(stateAfter(smallSegment(), 0, -1).activeBytes, int64_t(1024));
  QCOMPARE(AllocatorState{}.fragmentation(), 0.0);
}

void TestAllocatorState::expandableSegments() {
  const MemorySnapshot s = expandable();
  const int64_t e = 0x2000000, f = 0x4000000;
  const S fWhole{f, 6 * MiB};
  const B fFree{f, 6 * MiB, I};
  // After 8: the snapshot. After 7 (f's middle not mapped yet): f in two pieces.
  expectState(stateAfter(s, 0, 7), {{e, 4 * MiB}, {f, 2 * MiB}, {f + 4 * MiB, 2 * MiB}},
              {{e, MiB, A}, {e + MiB, 3 * MiB, I}, {f, 2 * MiB, I}, {f + 4 * MiB, 2 * MiB, I}});
  // After 6: e's upper half unmapped.
  expectState(stateAfter(s, 0, 6), {{e, 2 * MiB}, {f, 2 * MiB}, {f + 4 * MiB, 2 * MiB}},
              {{e, MiB, A}, {e + MiB, MiB, I}, {f, 2 * MiB, I}, {f + 4 * MiB, 2 * MiB, I}});
  const std::vector<S> cut{{e, 4 * MiB}, {f, 2 * MiB}, {f + 4 * MiB, 2 * MiB}};
  // After 5: mapped again (merged into one 4 MiB segment), the block freed.
  expectState(stateAfter(s, 0, 5), cut,
              {{e, MiB, A}, {e + MiB, 3 * MiB, I}, {f, 2 * MiB, I}, {f + 4 * MiB, 2 * MiB, I}});
  expectState(stateAfter(s, 0, 4), cut,
              {{e, MiB, A},
               {e + MiB, MiB, I},
               {e + 2 * MiB, MiB, P},
               {e + 3 * MiB, MiB, I},
               {f, 2 * MiB, I},
               {f + 4 * MiB, 2 * MiB, I}});
  QCOMPARE(stateAfter(s, 0, 3).blocks[2].state, A);
  expectState(stateAfter(s, 0, 1), {{e, 2 * MiB}, {f, 2 * MiB}, {f + 4 * MiB, 2 * MiB}},
              {{e, MiB, A}, {e + MiB, MiB, I}, {f, 2 * MiB, I}, {f + 4 * MiB, 2 * MiB, I}});
  expectState(stateAfter(s, 0, -1), {{f, 2 * MiB}, {f + 4 * MiB, 2 * MiB}},
              {{f, 2 * MiB, I}, {f + 4 * MiB, 2 * MiB, I}});
  expectState(stateAfter(s, 0, 8), {{e, 4 * MiB}, fWhole},
              {{e, MiB, A}, {e + MiB, 3 * MiB, I}, fFree});
  for (const StateSegment& seg : stateAfter(s, 0, 5).segments) QVERIFY(seg.expandable);
  for (int64_t x = -1; x < 9; ++x) QVERIFY(stateAfter(s, 0, x).notes().empty());
}

// After the last event the state is the snapshot's segments, block for block: hand-built, and
// the fixtures PyTorch's pickler wrote (2.0 without addresses, 2.1, 2.6 with an expandable one).
void TestAllocatorState::lastStateIsTheSnapshot() {
  for (const MemorySnapshot& s : {smallSegment(), expandable()}) {
    expectSnapshot(stateAfter(s, 0, int64_t(s.traces[0].count()) - 1), s, 0);
    expectSnapshot(snapshotState(s, 0), s, 0);
  }
  for (const char* name : {"snapshot_2_0_p4", "snapshot_2_1_p4", "snapshot_2_6_p4"}) {
    const MemorySnapshot s =
        readMemorySnapshot(std::string(MATMULVIZ_SNAPSHOT_DIR "/") + name + ".pickle");
    for (const size_t d : devicesWithMemory(s)) {
      const AllocatorState last = snapshotState(s, d);
      expectSnapshot(last, s, d);
      QVERIFY2(last.notes().empty(), name);
      const auto history = std::make_shared<const MemorySnapshot>(s);
      const AllocatorHistory h(history, d, 2);
      for (int64_t x = -1; x < h.eventCount(); ++x)
        expectSame(h.stateAfter(x), stateAfter(s, d, x));
    }
  }
}

// Events whose block or segment is missing (the ring buffer dropped the events before them, or
// the file is damaged) are skipped and counted; blocks outside every segment are not shown.
void TestAllocatorState::damagedTraceGivesNotes() {
  MemorySnapshot s = smallSegment();
  DeviceTrace& t = s.traces[0];
  add(t, TraceAction::Alloc, 0x777000, 512);              // 8: never there
  add(t, TraceAction::FreeRequested, 0x778000, 512);      // 9
  add(t, TraceAction::SegmentAlloc, 0x5000000, 2 * MiB);  // 10: not in the snapshot
  add(t, TraceAction::SegmentMap, 0x6000000, 2 * MiB);    // 11: outside every segment
  add(t, TraceAction::SegmentFree, 0x100000, 2 * MiB);    // 12: over the live segment
  add(t, TraceAction::FreeCompleted, 0x100000, 512);      // 13: over the live block
  add(t, TraceAction::FreeCompleted, 0x30000000, 512);    // 14: in no segment
  const AllocatorState st = stateAfter(s, 0, 7);
  for (size_t p = 0; p < kReplayProblemCount; ++p) QCOMPARE(st.problems[p], int64_t(1));
  QCOMPARE(st.notes().size(), kReplayProblemCount);
  QCOMPARE(st.notes()[0], std::string("'alloc' events whose block was not there: 1, skipped (a "
                                      "ring buffer overflow or a damaged trace)."));
  QCOMPARE(st.segments.size(), size_t(1));
  // Sizes near 2^63 and addresses at the end of the range clamp rather than overflow.
  MemorySnapshot huge = smallSegment();
  for (int64_t& size : huge.traces[0].size) size = std::numeric_limits<int64_t>::max() - 1;
  add(huge.traces[0], TraceAction::SegmentUnmap, std::numeric_limits<int64_t>::max() - 4, 8);
  for (int64_t x = -1; x < int64_t(huge.traces[0].count()); ++x) {
    const AllocatorState h = stateAfter(huge, 0, x);
    QVERIFY(h.reservedBytes >= 0 && h.activeBytes >= 0 && h.inactiveBytes >= 0);
  }
}

// A random trace (consistent or not): every event's state from checkpoints equals a full replay
// from the snapshot, at intervals of 1, 5 and the default, and with a budget that forces
// thinning.
void TestAllocatorState::checkpointsMatchAFullReplay_data() {
  QTest::addColumn<int>("interval");
  QTest::addColumn<int>("budget");
  QTest::newRow("every event") << 1 << (256 << 20);
  QTest::newRow("every 5") << 5 << (256 << 20);
  QTest::newRow("default") << int(AllocatorHistory::kCheckpointInterval) << (256 << 20);
  QTest::newRow("tiny budget") << 3 << 4000;
}

void TestAllocatorState::checkpointsMatchAFullReplay() {
  QFETCH(int, interval);
  QFETCH(int, budget);
  MemorySnapshot s = expandable();
  std::mt19937 rng(11);
  const TraceAction actions[] = {TraceAction::Alloc,         TraceAction::FreeRequested,
                                 TraceAction::FreeCompleted, TraceAction::SegmentAlloc,
                                 TraceAction::SegmentFree,   TraceAction::SegmentMap,
                                 TraceAction::SegmentUnmap,  TraceAction::Oom};
  for (int x = 0; x < 700; ++x)
    add(s.traces[0], actions[rng() % 8], 0x2000000 + int64_t(rng() % 16) * MiB / 2,
        int64_t(1 + rng() % 4) * MiB / 2);
  const auto shared = std::make_shared<const MemorySnapshot>(s);
  const AllocatorHistory h(shared, 0, size_t(interval), size_t(budget));
  QVERIFY(h.checkpointBytes() <= size_t(budget));
  for (int64_t x = -1; x < h.eventCount(); ++x) expectSame(h.stateAfter(x), stateAfter(s, 0, x));
}

void TestAllocatorState::checkpointBudgetThins() {
  QTemporaryDir dir;
  const std::string path = dir.filePath("gen.pickle").toStdString();
  testing::SnapshotGenerator::write(path, 40000, 50, 3);
  const auto s = std::make_shared<const MemorySnapshot>(readMemorySnapshot(path));
  const AllocatorHistory roomy(s, 0, 1000);
  QCOMPARE(roomy.checkpointCount(), size_t(40));
  QCOMPARE(roomy.checkpointInterval(), size_t(1000));
  const AllocatorHistory tight(s, 0, 1000, roomy.checkpointBytes() / 3);
  QVERIFY(tight.checkpointInterval() >= 2000);
  QVERIFY(tight.checkpointBytes() <= roomy.checkpointBytes() / 3);
  for (const int64_t x : {int64_t(-1), int64_t(0), int64_t(12345), int64_t(39999)})
    expectSame(tight.stateAfter(x), roomy.stateAfter(x));
}

// The timeline's rows (what the Memory view lists) against the trace events they come from.
void TestAllocatorState::timelineRowsMapToTraceEvents() {
  MemorySnapshot s = smallSegment();
  add(s.traces[0], TraceAction::Alloc, 0x100000, 500);  // 8: over a live block: two rows
  add(s.traces[0], TraceAction::Oom, 5, 10);            // 9
  const MemoryTimeline t = toMemoryTimeline(s, 0);
  const AllocatorHistory h(std::make_shared<const MemorySnapshot>(s), 0);
  QCOMPARE(h.timelineEventCount(), int64_t(t.events.size()));
  // Rows: the segments before the trace and the block alive before it (at time 0), then
  // free_completed (1), segment_alloc (2), alloc (3), alloc (4), segment_free (6), free and
  // alloc (8), oom (9); free_requested and snapshot have none.
  const std::vector<int64_t> expected{-1, -1, 1, 2, 3, 4, 6, 8, 8, 9};
  QCOMPARE(t.events.size(), expected.size());
  for (size_t r = 0; r < expected.size(); ++r)
    QCOMPARE(h.traceEventOfTimelineRow(int64_t(r)), expected[r]);
  QCOMPARE(h.traceEventOfTimelineRow(99), int64_t(-1));
  QCOMPARE(h.timelineRowOfTraceEvent(-1), int64_t(1));
  QCOMPARE(h.timelineRowOfTraceEvent(0), int64_t(1));  // free_requested: no row of its own
  QCOMPARE(h.timelineRowOfTraceEvent(5), int64_t(5));
  QCOMPARE(h.timelineRowOfTraceEvent(8), int64_t(8));
  QCOMPARE(h.timelineRowOfTraceEvent(100), int64_t(9));
  // The generated training-like trace and the fixtures agree row for row in count.
  for (const char* name : {"snapshot_2_1_p4", "snapshot_2_6_p4"}) {
    const MemorySnapshot f =
        readMemorySnapshot(std::string(MATMULVIZ_SNAPSHOT_DIR "/") + name + ".pickle");
    for (const size_t d : devicesWithMemory(f))
      QCOMPARE(timelineTraceEvents(f, d).size(), toMemoryTimeline(f, d).events.size());
  }
}

// A snapshot whose trace and segments agree as a real one's do (tests/reference/
// make_allocator_snapshot.py runs a training loop on a simulation of the caching allocator):
// every event replays without a note, nothing existed before the trace, and reserved follows the
// timeline's reserved row for row.
void TestAllocatorState::simulatedAllocatorReplaysCleanly() {
  const auto s = std::make_shared<const MemorySnapshot>(
      readMemorySnapshot(MATMULVIZ_SNAPSHOT_DIR "/allocator_sim_p4.pickle"));
  const AllocatorHistory h(s, 0, 16);
  QVERIFY(h.eventCount() > 400);
  const AllocatorState before = h.stateAfter(-1);
  QVERIFY(before.segments.empty() && before.blocks.empty());
  expectSnapshot(h.stateAfter(h.eventCount() - 1), *s, 0);
  int pending = 0;
  for (int64_t x = -1; x < h.eventCount(); ++x) {
    const AllocatorState st = h.stateAfter(x);
    QVERIFY2(st.notes().empty(), qPrintable(QString::number(x)));
    for (const StateBlock& b : st.blocks) pending += b.state == P;
  }
  QVERIFY(pending > 0);  // the loader's batches wait for their stream
  const MemoryTimeline t = toMemoryTimeline(*s, 0);
  for (int64_t row = 0; row < h.timelineEventCount(); ++row)
    QCOMPARE(h.stateAfter(h.traceEventOfTimelineRow(row)).reservedBytes,
             t.events[size_t(row)].after.reservedBytes);
}

QTEST_GUILESS_MAIN(TestAllocatorState)
#include "test_allocator_state.moc"
