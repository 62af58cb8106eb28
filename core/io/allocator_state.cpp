#include "core/io/allocator_state.h"

#include "core/io/allocator_replay.h"
#include "core/util/saturating.h"

#include <algorithm>

namespace matmulviz::snapshot {

namespace detail {

namespace {

// c10/cuda/CUDACachingAllocator.cpp: kSmallBuffer, the size of every small-pool segment.
constexpr int64_t kSmallBuffer = int64_t{2} << 20;

int64_t endOf(int64_t address, int64_t size) {
  return addSaturating(address, size);
}

bool isActive(BlockState s) {
  return s != BlockState::Inactive;
}

}  // namespace

Replay Replay::fromSnapshot(const MemorySnapshot& s, size_t device) {
  Replay r;
  for (const Segment& seg : s.segments) {
    if (seg.device != static_cast<int64_t>(device)) continue;
    LiveSegment live;
    live.size = seg.totalSize;
    live.stream = seg.stream;
    live.poolId[0] = seg.poolId[0];
    live.poolId[1] = seg.poolId[1];
    live.stack = seg.stack;
    live.large = seg.large;
    live.expandable = seg.expandable;
    r.addSegment(seg.address, seg.totalSize, live, false);
    const size_t last = std::min<size_t>(s.blocks.size(), size_t(seg.firstBlock) + seg.blockCount);
    for (size_t b = seg.firstBlock; b < last; ++b) {
      const Block& block = s.blocks[b];
      if (!isActive(block.state)) continue;
      const LiveBlock lb{block.size, block.requestedSize, block.stack,
                         block.state != BlockState::ActiveAllocated};
      if (!r.blocks.try_emplace(block.address, lb).second)
        r.count(ReplayProblem::BlockOutsideSegments);
    }
  }
  return r;
}

bool Replay::overlaps(int64_t address, int64_t size) const {
  const int64_t end = endOf(address, size);
  auto next = segments.lower_bound(address);
  if (next != segments.end() && (next->first == address || next->first < end)) return true;
  if (next == segments.begin()) return false;
  const auto prev = std::prev(next);
  return endOf(prev->first, prev->second.size) > address;
}

// MemoryViz.js map_segment: `merge` joins the range to a segment on the same stream that ends
// where it starts or starts where it ends (an expandable segment's unmapped range mapped back).
void Replay::addSegment(int64_t address, int64_t size, LiveSegment seg, bool merge) {
  if (overlaps(address, size)) return count(ReplayProblem::SegmentOverlaps);
  seg.size = size;
  auto it = segments.emplace(address, seg).first;
  if (!merge) return;
  if (const auto next = std::next(it); next != segments.end() &&
                                       endOf(address, size) == next->first &&
                                       next->second.stream == seg.stream) {
    it->second = next->second;  // the neighbour knows the pool; the trace does not
    it->second.size = addSaturating(size, next->second.size);
    segments.erase(next);
  }
  if (it != segments.begin()) {
    const auto prev = std::prev(it);
    if (endOf(prev->first, prev->second.size) == address && prev->second.stream == seg.stream) {
      prev->second.size = addSaturating(prev->second.size, it->second.size);
      segments.erase(it);
    }
  }
}

// MemoryViz.js unmap_segment with merge: the range leaves the segment holding it.
void Replay::cutSegment(int64_t address, int64_t size) {
  const int64_t end = endOf(address, size);
  auto it = segments.upper_bound(address);
  if (it == segments.begin()) return count(ReplayProblem::SegmentMapOutsideSegments);
  --it;
  const int64_t segEnd = endOf(it->first, it->second.size);
  if (end > segEnd) return count(ReplayProblem::SegmentMapOutsideSegments);
  LiveSegment seg = it->second;
  if (it->first == address) {
    segments.erase(it);
    seg.size = segEnd - end;
    if (seg.size > 0) segments.emplace(end, seg);
  } else if (segEnd == end) {
    it->second.size = address - it->first;
  } else {
    it->second.size = address - it->first;
    seg.size = segEnd - end;
    segments.emplace(end, seg);
  }
}

void Replay::undo(const DeviceTrace& t, size_t x) {
  const int64_t addr = t.addr[x], size = t.size[x];
  LiveSegment fromTrace;
  fromTrace.stream = t.stream[x];
  fromTrace.stack = t.stack[x];
  fromTrace.fromTrace = true;
  switch (t.action[x]) {
    case TraceAction::Alloc:
      if (blocks.erase(addr) == 0) count(ReplayProblem::AllocWithoutBlock);
      break;
    case TraceAction::FreeRequested:
      if (const auto it = blocks.find(addr); it != blocks.end())
        it->second.pendingFree = false;
      else
        count(ReplayProblem::FreeRequestedWithoutBlock);
      break;
    case TraceAction::FreeCompleted: {
      const LiveBlock block{size, size, t.stack[x], true};
      if (const auto [it, added] = blocks.try_emplace(addr, block); !added) {
        count(ReplayProblem::FreeCompletedOverBlock);
        it->second = block;  // as MemoryViz.js: the trace's block replaces it
      }
      break;
    }
    case TraceAction::SegmentAlloc:
      if (segments.erase(addr) == 0) count(ReplayProblem::SegmentAllocWithoutSegment);
      break;
    case TraceAction::SegmentFree:
      fromTrace.large = size != kSmallBuffer;
      addSegment(addr, size, fromTrace, false);
      break;
    case TraceAction::SegmentMap:
      cutSegment(addr, size);
      break;
    case TraceAction::SegmentUnmap:
      fromTrace.large = size != kSmallBuffer;
      fromTrace.expandable = true;
      addSegment(addr, size, fromTrace, true);
      break;
    case TraceAction::Snapshot:
    case TraceAction::Oom:
      break;
  }
}

AllocatorState Replay::materialize(int64_t event) const {
  AllocatorState out;
  out.event = event;
  out.problems = problems;
  out.segments.reserve(segments.size());
  out.blocks.reserve(blocks.size() * 2 + segments.size());
  auto block = blocks.begin();
  auto gap = [&](int64_t from, int64_t to, uint32_t seg) {
    out.blocks.push_back({from, to - from, 0, BlockState::Inactive, 0, seg});
    out.inactiveBytes = addSaturating(out.inactiveBytes, to - from);
    out.largestInactive = std::max(out.largestInactive, to - from);
  };
  for (const auto& [address, live] : segments) {
    const uint32_t index = static_cast<uint32_t>(out.segments.size());
    out.segments.push_back({address,
                            live.size,
                            live.stream,
                            live.large,
                            live.expandable,
                            {live.poolId[0], live.poolId[1]},
                            live.stack,
                            live.fromTrace});
    out.reservedBytes = addSaturating(out.reservedBytes, live.size);
    const int64_t end = endOf(address, live.size);
    int64_t cursor = address;
    for (; block != blocks.end() && block->first < end; ++block) {
      const LiveBlock& b = block->second;
      const int64_t blockEnd = endOf(block->first, b.size);
      if (block->first < cursor || blockEnd > end) {  // before the segment, over a block, or out
        ++out.problems[size_t(ReplayProblem::BlockOutsideSegments)];
        continue;
      }
      if (block->first > cursor) gap(cursor, block->first, index);
      out.blocks.push_back(
          {block->first, b.size, b.requested,
           b.pendingFree ? BlockState::ActivePendingFree : BlockState::ActiveAllocated, b.stack,
           index});
      int64_t& sum = b.pendingFree ? out.activeBytes : out.allocatedBytes;
      sum = addSaturating(sum, b.size);
      out.requestedBytes = addSaturating(out.requestedBytes, b.requested);
      cursor = blockEnd;
    }
    if (cursor < end) gap(cursor, end, index);
  }
  out.problems[size_t(ReplayProblem::BlockOutsideSegments)] +=
      static_cast<int64_t>(std::distance(block, blocks.end()));
  out.activeBytes = addSaturating(out.activeBytes, out.allocatedBytes);
  return out;
}

FlatReplay FlatReplay::of(const Replay& r) {
  FlatReplay f;
  f.blocks.assign(r.blocks.begin(), r.blocks.end());
  f.segments.assign(r.segments.begin(), r.segments.end());
  f.problems = r.problems;
  return f;
}

Replay FlatReplay::restore() const {
  Replay r;
  for (const auto& b : blocks) r.blocks.emplace_hint(r.blocks.end(), b);
  for (const auto& s : segments) r.segments.emplace_hint(r.segments.end(), s);
  r.problems = problems;
  return r;
}

size_t FlatReplay::bytes() const {
  return sizeof(FlatReplay) + blocks.capacity() * sizeof(blocks[0]) +
         segments.capacity() * sizeof(segments[0]);
}

}  // namespace detail

double AllocatorState::fragmentation() const {
  return inactiveBytes > 0 ? 1.0 - double(largestInactive) / double(inactiveBytes) : 0.0;
}

std::vector<std::string> AllocatorState::notes() const {
  static constexpr const char* kWhat[] = {
      "'alloc' events whose block was not there",
      "'free_requested' events whose block was not there",
      "'free_completed' events at the address of a block still there",
      "'segment_alloc' events whose segment was not there",
      "'segment_map' events whose range no segment held",
      "'segment_free' or 'segment_unmap' events over a segment still there",
      "blocks outside every segment or over another block",
  };
  std::vector<std::string> out;
  for (size_t p = 0; p < kReplayProblemCount; ++p)
    if (problems[p] > 0)
      out.push_back(
          std::string(kWhat[p]) + ": " + std::to_string(problems[p]) +
          (p == size_t(ReplayProblem::BlockOutsideSegments) ? ", not shown" : ", skipped") +
          " (a ring buffer overflow or a damaged trace).");
  return out;
}

AllocatorState snapshotState(const MemorySnapshot& snapshot, size_t device) {
  const DeviceTrace* trace = device < snapshot.traces.size() ? &snapshot.traces[device] : nullptr;
  const int64_t last = trace ? static_cast<int64_t>(trace->count()) - 1 : -1;
  return detail::Replay::fromSnapshot(snapshot, device).materialize(last);
}

AllocatorState stateAfter(const MemorySnapshot& snapshot, size_t device, int64_t event) {
  detail::Replay r = detail::Replay::fromSnapshot(snapshot, device);
  const DeviceTrace* trace = device < snapshot.traces.size() ? &snapshot.traces[device] : nullptr;
  const int64_t n = trace ? static_cast<int64_t>(trace->count()) : 0;
  event = std::clamp<int64_t>(event, -1, n - 1);
  for (int64_t x = n - 1; x > event; --x) r.undo(*trace, static_cast<size_t>(x));
  return r.materialize(event);
}

}  // namespace matmulviz::snapshot
