// Fuzzes the PyTorch memory snapshot reader: any bytes as a snapshot file, parsed by the strict
// pickle reader (core/io/pickle_reader.h) and converted (core/io/memory_snapshot.h). Every
// failure must be a PickleError or a SnapshotError; anything else (a crash, a sanitizer report,
// another exception) is a finding, and so is a snapshot that breaks the invariants checked here,
// or whose timeline (core/io/snapshot_timeline.h, what the Memory view draws) does, or its
// bands stacked by allocation and its blocks' hover texts (snapshot_allocation_bands.h,
// snapshot_block_text.h), or whose allocator state at an event (core/io/allocator_history.h,
// the Memory view's segments panel) does. Both the tree reader (pickle::parse +
// toMemorySnapshot) and the streaming one (parseMemorySnapshot).
#include "core/io/allocator_history.h"
#include "core/io/memory_snapshot.h"
#include "core/io/pickle_reader.h"
#include "core/io/snapshot_allocation_bands.h"
#include "core/io/snapshot_block_text.h"
#include "core/io/snapshot_timeline.h"
#include "core/util/saturating.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace {

void check(const matmulviz::snapshot::MemorySnapshot& s) {
  for (const auto& seg : s.segments)
    if (size_t(seg.firstBlock) + seg.blockCount > s.blocks.size()) __builtin_trap();
  for (const auto& b : s.blocks)
    if (b.segment >= s.segments.size() || b.stack >= s.stacks.size() || b.size < 0)
      __builtin_trap();
  for (const auto& t : s.traces) {
    const size_t n = t.count();
    if (t.addr.size() != n || t.size.size() != n || t.stream.size() != n || t.timeUs.size() != n ||
        t.stack.size() != n)
      __builtin_trap();
    for (const auto id : t.stack)
      if (id >= s.stacks.size()) __builtin_trap();
  }
  for (const auto& stack : s.stacks)
    for (const uint32_t f : stack)
      if (f >= s.frames.size()) __builtin_trap();
  if (s.stacks.empty() || !s.stacks[0].empty()) __builtin_trap();
}

/// Bands stacked by allocation: totals never negative, vertices in order, elements listed.
void checkBands(const matmulviz::snapshot::AllocationBands& b) {
  for (const int64_t total : b.totalAtStep)
    if (total < 0) __builtin_trap();
  if (b.peakBytes < 0 || b.bands.size() > b.elements.size()) __builtin_trap();
  for (const auto& band : b.bands) {
    if (band.element >= b.elements.size() || band.steps.size() != band.offsets.size() ||
        band.steps.size() < 2)
      __builtin_trap();
    for (size_t i = 1; i < band.steps.size(); ++i)
      if (band.steps[i] < band.steps[i - 1]) __builtin_trap();
  }
}

/// Each device's timeline, as the app's Memory view reads it: counters never negative, every
/// event's op and block listed.
void checkTimelines(const matmulviz::snapshot::MemorySnapshot& s) {
  for (const size_t d : matmulviz::snapshot::devicesWithMemory(s)) {
    const matmulviz::MemoryTimeline t = matmulviz::snapshot::toMemoryTimeline(s, d);
    for (const matmulviz::MemoryEvent& e : t.events)
      if (e.after.allocatedBytes < 0 || e.after.reservedBytes < 0 || e.opId < 0 ||
          static_cast<size_t>(e.opId) >= t.opNames.size() ||
          e.allocationId >= static_cast<int64_t>(t.records.size()))
        __builtin_trap();
    // The segments panel maps each timeline row to its trace event.
    if (matmulviz::snapshot::timelineTraceEvents(s, d).size() != t.events.size()) __builtin_trap();
    const auto blocks = matmulviz::snapshot::timelineBlocks(s, d);
    if (blocks.size() != t.records.size()) __builtin_trap();
    for (size_t b = 0; b < blocks.size() && b < 16; ++b)
      if (matmulviz::snapshot::describeBlock(s, d, blocks[b]).empty()) __builtin_trap();
    checkBands(matmulviz::snapshot::allocationBands(s, d, 64, 4096));
  }
}

/// One allocator state: segments by address without overlap, each covered by its blocks in
/// order, counters never negative.
void checkState(const matmulviz::snapshot::AllocatorState& st) {
  using matmulviz::snapshot::BlockState;
  int64_t segmentEnd = -1;
  for (const auto& seg : st.segments) {
    if (seg.size < 0 || seg.address < segmentEnd) __builtin_trap();
    segmentEnd = matmulviz::addSaturating(seg.address, seg.size);
  }
  int64_t blockEnd = -1;
  uint32_t segment = 0;
  for (const auto& b : st.blocks) {
    if (b.segment >= st.segments.size() || b.segment < segment || b.size < 0 ||
        b.state == BlockState::ActiveAwaitingFree)
      __builtin_trap();
    if (b.segment != segment) blockEnd = -1;
    segment = b.segment;
    const auto& seg = st.segments[b.segment];
    if (b.address < seg.address || b.address < blockEnd) __builtin_trap();
    blockEnd = matmulviz::addSaturating(b.address, b.size);
  }
  if (st.reservedBytes < 0 || st.activeBytes < st.allocatedBytes || st.allocatedBytes < 0 ||
      st.inactiveBytes < 0 || st.fragmentation() < 0 || st.fragmentation() > 1)
    __builtin_trap();
}

/// The allocator state at a few events of each device, from checkpoints (every 4 events) and
/// from a full replay: the same, and well formed.
void checkAllocatorStates(const std::shared_ptr<const matmulviz::snapshot::MemorySnapshot>& s) {
  for (const size_t d : matmulviz::snapshot::devicesWithMemory(*s)) {
    const matmulviz::snapshot::AllocatorHistory h(s, d, 4);
    const int64_t n = h.eventCount();
    for (const int64_t x : {int64_t(-1), n / 3, n / 2, n - 1}) {
      const auto a = h.stateAfter(x);
      const auto b = matmulviz::snapshot::stateAfter(*s, d, x);
      checkState(a);
      if (a.blocks.size() != b.blocks.size() || a.segments.size() != b.segments.size() ||
          a.problems != b.problems || a.activeBytes != b.activeBytes)
        __builtin_trap();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const matmulviz::pickle::Document doc = matmulviz::pickle::parse(std::span(data, size));
    const auto s = std::make_shared<const matmulviz::snapshot::MemorySnapshot>(
        matmulviz::snapshot::toMemorySnapshot(doc));
    check(*s);
    checkTimelines(*s);
    checkAllocatorStates(s);
  } catch (const matmulviz::pickle::PickleError&) {
  } catch (const matmulviz::snapshot::SnapshotError&) {
  }
  // The streaming reader that files go through (trace entries taken while parsing, their
  // slots reused): the same invariants, and never another kind of failure.
  try {
    const auto s = std::make_shared<const matmulviz::snapshot::MemorySnapshot>(
        matmulviz::snapshot::parseMemorySnapshot(std::span(data, size)));
    check(*s);
    checkTimelines(*s);
    checkAllocatorStates(s);
  } catch (const matmulviz::pickle::PickleError&) {
    // A refused pickle, with a message: the expected outcome for most inputs.
  } catch (const matmulviz::snapshot::SnapshotError&) {
    // A pickle that is not a snapshot, or has a wrong value.
  }
  return 0;
}
