// snapshot::allocationBands: memory_viz's "Active Memory Timeline" stacking (MemoryViz.js,
// process_alloc_data) on a hand-built snapshot where every band's offsets are worked out by
// hand: blocks alive at the start stacked first, a free sliding the bands above it down over 3
// steps, the largest maxEntries drawn and the rest summarised, the vertex budget, and hit tests.
#include "core/io/memory_snapshot.h"
#include "core/io/snapshot_allocation_bands.h"

#include <QtTest>

using namespace matmulviz;
using namespace matmulviz::snapshot;

namespace {

/// Trace: alloc A (100 B), B (200 B), C (50 B); free A, free C; free D (30 B, allocated before
/// the trace). One segment holds E, active (size 512, requested 40), and an inactive block.
MemorySnapshot handMade() {
  MemorySnapshot s;
  s.stacks = {{}};
  Segment seg;
  seg.address = 0x500;
  seg.totalSize = 2048;
  seg.blockCount = 2;
  s.segments = {seg};
  s.blocks = {{0, 0x500, 512, 40, BlockState::ActiveAllocated, 0},
              {0, 0x700, 1536, 1536, BlockState::Inactive, 0}};
  DeviceTrace t;
  auto add = [&](TraceAction a, int64_t addr, int64_t size) {
    t.action.push_back(a);
    t.addr.push_back(addr);
    t.size.push_back(size);
    t.stream.push_back(0);
    t.timeUs.push_back(int64_t(t.action.size()) * 10);
    t.stack.push_back(0);
  };
  add(TraceAction::Alloc, 0x100, 100);
  add(TraceAction::Alloc, 0x200, 200);
  add(TraceAction::FreeRequested, 0x100, 100);  // not an action: the free completes later
  add(TraceAction::Alloc, 0x300, 50);
  add(TraceAction::FreeCompleted, 0x100, 100);
  add(TraceAction::FreeCompleted, 0x300, 50);
  add(TraceAction::FreeCompleted, 0x900, 30);
  add(TraceAction::SegmentAlloc, 0x10000, 4096);
  s.traces = {t};
  return s;
}

std::vector<int64_t> offsets(const AllocationBand& b) {
  return b.offsets;
}
std::vector<double> steps(const AllocationBand& b) {
  return b.steps;
}

}  // namespace

class TestSnapshotAllocationBands : public QObject {
  Q_OBJECT
 private slots:
  void everyAllocationDrawn();
  void largestDrawnRestSummarised();
  void vertexBudgetHalvesTheCap();
  void onlyBlocksAliveAtTheStart();
  void hitTests();
};

void TestSnapshotAllocationBands::everyAllocationDrawn() {
  const AllocationBands b = allocationBands(handMade(), 0);
  // Elements: A, B, C (trace order), D (freed, never allocated), E (the segment's block).
  QCOMPARE(b.elements.size(), size_t(5));
  QCOMPARE(b.elements[3].allocEvent, int64_t(-1));
  QCOMPARE(b.elements[3].freeEvent, int64_t(6));
  QCOMPARE(b.elements[4].size, int64_t(40));  // requested_size, as the viewer takes it
  QCOMPARE(b.maxEntries, kBandsMaxEntries);
  // Alive at the start, bottom first: E then D (the reverse of their order); then A, B, C.
  QCOMPARE(b.bands.size(), size_t(5));
  const std::vector<uint32_t> order{4, 3, 0, 1, 2};
  for (size_t i = 0; i < order.size(); ++i) QCOMPARE(b.bands[i].element, order[i]);
  QCOMPARE(steps(b.bands[0]), (std::vector<double>{0, 12}));  // E
  QCOMPARE(offsets(b.bands[0]), (std::vector<int64_t>{0, 0}));
  QCOMPARE(steps(b.bands[1]), (std::vector<double>{0, 9}));  // D, freed at step 8
  QCOMPARE(offsets(b.bands[1]), (std::vector<int64_t>{40, 40}));
  QCOMPARE(steps(b.bands[2]), (std::vector<double>{0, 4}));  // A, freed at step 3
  QCOMPARE(offsets(b.bands[2]), (std::vector<int64_t>{70, 70}));
  // B slides down by A's 100 B over steps 4..7, then by D's 30 B over 9..12.
  QCOMPARE(steps(b.bands[3]), (std::vector<double>{1, 4, 7, 9, 12, 12}));
  QCOMPARE(offsets(b.bands[3]), (std::vector<int64_t>{170, 170, 70, 70, 40, 40}));
  QCOMPARE(steps(b.bands[4]), (std::vector<double>{2, 4, 7, 8}));  // C: slides, then freed
  QCOMPARE(offsets(b.bands[4]), (std::vector<int64_t>{370, 370, 270, 270}));
  QCOMPARE(b.totalAtStep,
           (std::vector<int64_t>{170, 370, 420, 420, 420, 420, 420, 320, 270, 270, 270, 270}));
  QCOMPARE(b.peakBytes, int64_t(420));
  QCOMPARE(b.peakStep, 2.0);
  QCOMPARE(b.actionSteps, (std::vector<double>{0, 1, 2, 3, 7, 8}));
  QCOMPARE(b.actionEvents, (std::vector<int64_t>{0, 1, 3, 4, 5, 6}));
  for (const int64_t size : b.summarySizes) QCOMPARE(size, int64_t(0));
}

void TestSnapshotAllocationBands::largestDrawnRestSummarised() {
  const AllocationBands b = allocationBands(handMade(), 0, 2);
  QCOMPARE(b.bands.size(), size_t(2));  // B (200) and A (100); C, D, E summarised
  QCOMPARE(b.bands[0].element, uint32_t(0));
  QCOMPARE(steps(b.bands[0]), (std::vector<double>{0, 4}));
  QCOMPARE(offsets(b.bands[0]), (std::vector<int64_t>{0, 0}));
  QCOMPARE(steps(b.bands[1]), (std::vector<double>{1, 4, 7, 9}));
  QCOMPARE(offsets(b.bands[1]), (std::vector<int64_t>{100, 100, 0, 0}));
  // The summary sits on the drawn bands: E and D (70 B) from the start, C from step 2; a
  // summarised free counts after its step.
  QCOMPARE(b.summarySteps, (std::vector<double>{0, 1, 2, 3, 4, 7, 8, 9}));
  QCOMPARE(b.summaryOffsets, (std::vector<int64_t>{100, 300, 300, 300, 300, 200, 200, 200}));
  QCOMPARE(b.summarySizes, (std::vector<int64_t>{70, 70, 120, 120, 120, 120, 70, 40}));
  QCOMPARE(b.totalAtStep, (std::vector<int64_t>{170, 370, 420, 420, 420, 420, 420, 320, 270}));
  QCOMPARE(b.peakBytes, int64_t(420));
}

void TestSnapshotAllocationBands::vertexBudgetHalvesTheCap() {
  // All five: 5 starts, then A's free costs 1 + 2 * 2 vertices: over 8. Two fit.
  const AllocationBands b = allocationBands(handMade(), 0, 5, 8);
  QCOMPARE(b.maxEntries, size_t(2));
  QCOMPARE(b.bands.size(), size_t(2));
  QCOMPARE(b.peakBytes, int64_t(420));
  const AllocationBands none = allocationBands(handMade(), 0, 5, 0);
  QCOMPARE(none.maxEntries, size_t(0));
  QCOMPARE(none.bands.size(), size_t(0));
  QCOMPARE(none.peakBytes, int64_t(420));
}

void TestSnapshotAllocationBands::onlyBlocksAliveAtTheStart() {
  MemorySnapshot s = handMade();
  s.traces.clear();
  const AllocationBands b = allocationBands(s, 0);
  QCOMPARE(b.bands.size(), size_t(1));  // E, flat over one step
  QCOMPARE(steps(b.bands[0]), (std::vector<double>{0, 1}));
  QCOMPARE(b.totalAtStep, (std::vector<int64_t>{40}));
  QCOMPARE(b.actionEvents, (std::vector<int64_t>{-1}));
  QCOMPARE(allocationBands(s, 3).bands.size(), size_t(0));  // a device with nothing
}

void TestSnapshotAllocationBands::hitTests() {
  const AllocationBands b = allocationBands(handMade(), 0);
  QCOMPARE(bandAt(b, 5, 10), 0);    // E at the bottom
  QCOMPARE(bandAt(b, 5, 150), 3);   // B, a third of the way down its slide: from 136.7
  QCOMPARE(bandAt(b, 5, 50), 1);    // D, 40 to 70
  QCOMPARE(bandAt(b, 5, 100), -1);  // the gap A left, closing as B slides
  QCOMPARE(bandAt(b, 5, 350), 4);   // C, sliding: 336.7 to 386.7
  QCOMPARE(bandAt(b, 5, 500), -1);  // above everything
  QCOMPARE(bandOffsetAt(b.bands[3], 5.5), 120.0);
  QCOMPARE(bandOffsetAt(b.bands[3], 0.5), -1.0);
  QCOMPARE(eventAtStep(b, 5), int64_t(4));  // A's free (trace entry 4) slides 3..7
  QCOMPARE(eventAtStep(b, -1), int64_t(-1));
  const AllocationBands two = allocationBands(handMade(), 0, 2);
  QCOMPARE(bandAt(two, 2.5, 350), kSummaryBand);
  QCOMPARE(bandAt(two, 2.5, 50), 0);
}

QTEST_GUILESS_MAIN(TestSnapshotAllocationBands)
#include "test_snapshot_allocation_bands.moc"
