// Fuzzes the PyTorch memory snapshot reader: any bytes as a snapshot file, parsed by the strict
// pickle reader (core/io/pickle_reader.h) and converted (core/io/memory_snapshot.h). Every
// failure must be a PickleError or a SnapshotError; anything else (a crash, a sanitizer report,
// another exception) is a finding, and so is a snapshot that breaks the invariants checked here,
// or whose timeline (core/io/snapshot_timeline.h, what the Memory view draws) does, or its
// bands stacked by allocation and its blocks' hover texts (snapshot_allocation_bands.h,
// snapshot_block_text.h). Both the
// tree reader (pickle::parse + toMemorySnapshot) and the streaming one (parseMemorySnapshot).
#include "core/io/memory_snapshot.h"
#include "core/io/pickle_reader.h"
#include "core/io/snapshot_allocation_bands.h"
#include "core/io/snapshot_block_text.h"
#include "core/io/snapshot_timeline.h"

#include <cstddef>
#include <cstdint>
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
    const auto blocks = matmulviz::snapshot::timelineBlocks(s, d);
    if (blocks.size() != t.records.size()) __builtin_trap();
    for (size_t b = 0; b < blocks.size() && b < 16; ++b)
      if (matmulviz::snapshot::describeBlock(s, d, blocks[b]).empty()) __builtin_trap();
    checkBands(matmulviz::snapshot::allocationBands(s, d, 64, 4096));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const matmulviz::pickle::Document doc = matmulviz::pickle::parse(std::span(data, size));
    const matmulviz::snapshot::MemorySnapshot s = matmulviz::snapshot::toMemorySnapshot(doc);
    check(s);
    checkTimelines(s);
  } catch (const matmulviz::pickle::PickleError&) {
  } catch (const matmulviz::snapshot::SnapshotError&) {
  }
  // The streaming reader that files go through (trace entries taken while parsing, their
  // slots reused): the same invariants, and never another kind of failure.
  try {
    const matmulviz::snapshot::MemorySnapshot s =
        matmulviz::snapshot::parseMemorySnapshot(std::span(data, size));
    check(s);
    checkTimelines(s);
  } catch (const matmulviz::pickle::PickleError&) {
    // A refused pickle, with a message: the expected outcome for most inputs.
  } catch (const matmulviz::snapshot::SnapshotError&) {
    // A pickle that is not a snapshot, or has a wrong value.
  }
  return 0;
}
