#include "core/io/snapshot_timeline.h"

#include "core/io/snapshot_categories.h"
#include "core/io/snapshot_frames.h"
#include "core/util/saturating.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace matmulviz::snapshot {

namespace {

bool isActive(BlockState s) {
  return s != BlockState::Inactive;
}

class Builder {
 public:
  explicit Builder(const MemorySnapshot& s) : s_(s) {}

  MemoryTimeline build(size_t device);

 private:
  void traceEvent(const DeviceTrace& trace, size_t x, double timeUs);
  int32_t op(StackId stack);
  std::string label(StackId stack, int64_t addr) const;
  int64_t allocate(int64_t addr, int64_t size, int64_t requested, StackId stack, double timeUs);
  void free(int64_t addr, double timeUs, int32_t opId);
  void push(MemoryEventKind kind, int64_t id, int64_t bytes, double timeUs, int32_t opId) {
    t_.events.push_back({kind, id, bytes, timeUs, now_, opId});
  }

  const MemorySnapshot& s_;
  MemoryTimeline t_;
  std::unordered_map<std::string, int32_t> opIndex_;
  std::unordered_map<int64_t, size_t> live_;  // address -> index in t_.records
  std::vector<BlockLife> lives_;              // per record, for its category
  int64_t entry_ = -1;  // the trace entry being walked; -1: the blocks at time 0
  MemoryCounters now_;
};

int32_t Builder::op(StackId stack) {
  const auto& frames = s_.stacks[stack];
  const std::string name = frames.empty() ? "(no frames)" : opName(s_, frames);
  const auto [it, added] = opIndex_.try_emplace(name, static_cast<int32_t>(t_.opNames.size()));
  if (added) t_.opNames.push_back(name);
  return it->second;
}

std::string Builder::label(StackId stack, int64_t addr) const {
  const auto& frames = s_.stacks[stack];
  if (frames.empty()) {
    char text[40];
    std::snprintf(text, sizeof text, "block 0x%llx", static_cast<unsigned long long>(addr));
    return text;
  }
  return frameLabel(s_.frames[labelFrame(s_, frames)]);
}

int64_t Builder::allocate(int64_t addr, int64_t size, int64_t requested, StackId stack,
                          double timeUs) {
  const int32_t opId = op(stack);
  if (live_.contains(addr)) free(addr, timeUs, opId);  // its free_completed is missing
  AllocationRecord r;
  r.id = static_cast<int64_t>(t_.records.size());
  r.label = label(stack, addr);
  r.opId = opId;
  r.requestedBytes = requested;
  r.blockBytes = size;
  r.small = size <= (int64_t{1} << 20);
  t_.records.push_back(r);
  lives_.push_back({stack, size, entry_, -1});
  live_[addr] = t_.records.size() - 1;
  now_.allocatedBytes = addSaturating(now_.allocatedBytes, size);
  now_.requestedBytes = addSaturating(now_.requestedBytes, requested);
  push(MemoryEventKind::Alloc, r.id, size, timeUs, opId);
  return r.id;
}

void Builder::free(int64_t addr, double timeUs, int32_t opId) {
  const auto it = live_.find(addr);
  if (it == live_.end()) return;  // allocated before the trace: placed at time 0 already
  AllocationRecord& r = t_.records[it->second];
  r.alive = false;
  lives_[it->second].freeEvent = entry_;
  live_.erase(it);
  now_.allocatedBytes = std::max<int64_t>(0, subSaturating(now_.allocatedBytes, r.blockBytes));
  now_.requestedBytes = std::max<int64_t>(0, subSaturating(now_.requestedBytes, r.requestedBytes));
  push(MemoryEventKind::Free, r.id, r.blockBytes, timeUs, opId);
}

void Builder::traceEvent(const DeviceTrace& trace, size_t x, double timeUs) {
  const int64_t size = trace.size[x];
  switch (trace.action[x]) {
    case TraceAction::Alloc:
      allocate(trace.addr[x], size, size, trace.stack[x], timeUs);
      break;
    case TraceAction::FreeCompleted:
      free(trace.addr[x], timeUs, op(trace.stack[x]));
      break;
    case TraceAction::SegmentAlloc:
    case TraceAction::SegmentMap:
      now_.reservedBytes = addSaturating(now_.reservedBytes, size);
      push(MemoryEventKind::SegmentAlloc, -1, size, timeUs, op(trace.stack[x]));
      break;
    case TraceAction::SegmentFree:
    case TraceAction::SegmentUnmap:
      now_.reservedBytes = std::max<int64_t>(0, subSaturating(now_.reservedBytes, size));
      push(MemoryEventKind::SegmentFree, -1, size, timeUs, op(trace.stack[x]));
      break;
    case TraceAction::Oom:
      push(MemoryEventKind::Oom, -1, size, timeUs, op(trace.stack[x]));
      break;
    case TraceAction::FreeRequested:  // still in use until free_completed
    case TraceAction::Snapshot:
      break;
  }
}

MemoryTimeline Builder::build(size_t device) {
  const DeviceTrace* trace = device < s_.traces.size() ? &s_.traces[device] : nullptr;
  const std::vector<InitialBlock> initial = initialBlocks(s_, device);
  if (const int64_t reserved = reservedAtStart(s_, device); reserved > 0) {
    now_.reservedBytes = reserved;
    push(MemoryEventKind::SegmentAlloc, -1, reserved, 0, op(0));
  }
  for (const InitialBlock& b : initial) allocate(b.addr, b.size, b.requested, b.stack, 0);
  const size_t firstTraced = t_.records.size();
  for (size_t r = 0; r < firstTraced; ++r)
    t_.aliveWhy[t_.records[r].id] = "allocated before the recording started";
  if (trace) {
    int64_t t0 = -1;
    for (size_t x = 0; x < trace->count() && t0 < 0; ++x) t0 = trace->timeUs[x];
    for (size_t x = 0; x < trace->count(); ++x) {
      const int64_t us = trace->timeUs[x];
      entry_ = static_cast<int64_t>(x);
      traceEvent(*trace, x, us >= 0 && t0 >= 0 ? double(us - t0) : double(x + 1));
    }
  }
  const BlockCategorizer categorizer(s_, device);
  for (size_t r = 0; r < t_.records.size(); ++r)
    t_.records[r].category = categorizer.categorize(lives_[r]).category;
  // Only the blocks still alive keep a reason; a freed one shows as freed.
  for (const AllocationRecord& r : t_.records)
    if (!r.alive) t_.aliveWhy.erase(r.id);
  return std::move(t_);
}

}  // namespace

std::vector<InitialBlock> initialBlocks(const MemorySnapshot& s, size_t device) {
  const DeviceTrace* trace = device < s.traces.size() ? &s.traces[device] : nullptr;
  std::vector<InitialBlock> out;
  std::unordered_set<int64_t> alive, seen;
  for (size_t x = 0; trace && x < trace->count(); ++x) {
    const int64_t addr = trace->addr[x];
    if (trace->action[x] == TraceAction::Alloc) {
      alive.insert(addr);
    } else if (trace->action[x] == TraceAction::FreeCompleted && !alive.erase(addr)) {
      out.push_back({addr, trace->size[x], trace->size[x], trace->stack[x]});  // freed, never
      seen.insert(addr);                                                       // allocated here
    }
  }
  for (const Segment& seg : s.segments) {
    if (seg.device != static_cast<int64_t>(device)) continue;
    for (uint32_t b = seg.firstBlock; b < seg.firstBlock + seg.blockCount; ++b) {
      const Block& block = s.blocks[b];
      if (isActive(block.state) && !alive.contains(block.address) && !seen.contains(block.address))
        out.push_back({block.address, block.size, block.requestedSize, block.stack});
    }
  }
  return out;
}

int64_t reservedAtStart(const MemorySnapshot& s, size_t device) {
  const DeviceTrace* trace = device < s.traces.size() ? &s.traces[device] : nullptr;
  int64_t atSnapshot = 0, change = 0;
  for (const Segment& seg : s.segments)
    if (seg.device == static_cast<int64_t>(device))
      atSnapshot = addSaturating(atSnapshot, seg.totalSize);
  for (size_t x = 0; trace && x < trace->count(); ++x) {
    const TraceAction a = trace->action[x];
    if (a == TraceAction::SegmentAlloc || a == TraceAction::SegmentMap)
      change = addSaturating(change, trace->size[x]);
    if (a == TraceAction::SegmentFree || a == TraceAction::SegmentUnmap)
      change = subSaturating(change, trace->size[x]);
  }
  return std::max<int64_t>(0, subSaturating(atSnapshot, change));
}

MemoryTimeline toMemoryTimeline(const MemorySnapshot& snapshot, size_t device) {
  return Builder(snapshot).build(device);
}

std::vector<size_t> devicesWithMemory(const MemorySnapshot& snapshot) {
  std::vector<size_t> out;
  for (size_t d = 0; d < snapshot.traces.size(); ++d)
    if (snapshot.traces[d].count() > 0) out.push_back(d);
  for (const Segment& seg : snapshot.segments)
    if (seg.device >= 0) out.push_back(static_cast<size_t>(seg.device));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  if (out.size() > kMaxDevices) out.resize(kMaxDevices);
  return out;
}

uint32_t labelFrame(const MemorySnapshot& s, const std::vector<uint32_t>& frames) {
  for (const uint32_t f : frames)
    if (isPythonFrame(s.frames[f])) return f;
  const auto hasFile = [&](uint32_t f) {
    return !s.frames[f].filename.empty() && s.frames[f].filename != "??";
  };
  for (const uint32_t f : frames)
    if (hasFile(f) && !isMachineryFrame(s.frames[f])) return f;
  for (const uint32_t f : frames)
    if (!isMachineryFrame(s.frames[f])) return f;
  return frames.front();
}

}  // namespace matmulviz::snapshot
