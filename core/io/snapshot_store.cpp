#include "core/io/snapshot_store.h"

#include "core/io/pickle_reader.h"
#include "core/io/snapshot_frames.h"
#include "core/io/snapshot_timeline.h"
#include "core/io/timeline_store.h"
#include "core/memory/memory_event.h"
#include "core/util/saturating.h"

#include <algorithm>
#include <unordered_map>

namespace matmulviz::snapshot {

namespace {

using store::StoredEvent;

/// Walks one device's trace as snapshot_timeline.cpp's Builder does, writing events.
class Walker {
 public:
  Walker(const MemorySnapshot& s, store::TimelineWriter& out, const LoadOptions& options,
         uint64_t total)
      : s_(s), out_(out), options_(options), total_(total) {}

  void device(size_t device);
  uint64_t done() const { return done_; }

 private:
  struct Live {
    int64_t size = 0, requested = 0;
  };
  void event(const DeviceTrace& trace, size_t x, double timeUs);
  void allocate(int64_t addr, int64_t size, int64_t requested, StackId stack, double timeUs);
  void free(int64_t addr, double timeUs, StackId stack);
  void record(MemoryEventKind kind, int64_t addr, int64_t bytes, StackId stack, double timeUs) {
    StoredEvent e;
    e.timeUs = timeUs;
    e.addr = addr;
    e.bytes = bytes;
    e.allocated = allocated_;
    e.requested = requested_;
    e.reserved = reserved_;
    e.stack = stack;
    e.kind = static_cast<uint8_t>(kind);
    out_.add(e);
  }
  void tick();

  const MemorySnapshot& s_;
  store::TimelineWriter& out_;
  const LoadOptions& options_;
  uint64_t total_ = 0, done_ = 0;
  std::unordered_map<int64_t, Live> live_;
  int64_t allocated_ = 0, requested_ = 0, reserved_ = 0;
};

void Walker::tick() {
  if (++done_ % 65536) return;
  if (options_.cancel && options_.cancel->load(std::memory_order_relaxed))
    throw pickle::Cancelled();
  if (options_.progress) options_.progress(done_, total_);
}

void Walker::allocate(int64_t addr, int64_t size, int64_t requested, StackId stack, double timeUs) {
  if (live_.contains(addr)) free(addr, timeUs, stack);  // its free_completed is missing
  live_[addr] = {size, requested};
  allocated_ = addSaturating(allocated_, size);
  requested_ = addSaturating(requested_, requested);
  record(MemoryEventKind::Alloc, addr, size, stack, timeUs);
}

void Walker::free(int64_t addr, double timeUs, StackId stack) {
  const auto it = live_.find(addr);
  if (it == live_.end()) return;  // allocated before the trace: placed at time 0 already
  const Live b = it->second;
  live_.erase(it);
  allocated_ = std::max<int64_t>(0, subSaturating(allocated_, b.size));
  requested_ = std::max<int64_t>(0, subSaturating(requested_, b.requested));
  record(MemoryEventKind::Free, addr, b.size, stack, timeUs);
}

void Walker::event(const DeviceTrace& trace, size_t x, double timeUs) {
  const int64_t size = trace.size[x];
  const StackId stack = trace.stack[x];
  switch (trace.action[x]) {
    case TraceAction::Alloc:
      allocate(trace.addr[x], size, size, stack, timeUs);
      break;
    case TraceAction::FreeCompleted:
      free(trace.addr[x], timeUs, stack);
      break;
    case TraceAction::SegmentAlloc:
    case TraceAction::SegmentMap:
      reserved_ = addSaturating(reserved_, size);
      record(MemoryEventKind::SegmentAlloc, trace.addr[x], size, stack, timeUs);
      break;
    case TraceAction::SegmentFree:
    case TraceAction::SegmentUnmap:
      reserved_ = std::max<int64_t>(0, subSaturating(reserved_, size));
      record(MemoryEventKind::SegmentFree, trace.addr[x], size, stack, timeUs);
      break;
    case TraceAction::Oom:
      record(MemoryEventKind::Oom, trace.addr[x], size, stack, timeUs);
      break;
    case TraceAction::FreeRequested:  // still in use until free_completed
    case TraceAction::Snapshot:
      break;
  }
}

void Walker::device(size_t device) {
  live_.clear();
  allocated_ = requested_ = reserved_ = 0;
  const DeviceTrace* trace = device < s_.traces.size() ? &s_.traces[device] : nullptr;
  if (const int64_t reserved = reservedAtStart(s_, device); reserved > 0) {
    reserved_ = reserved;
    record(MemoryEventKind::SegmentAlloc, 0, reserved, 0, 0);
  }
  for (const InitialBlock& b : initialBlocks(s_, device))
    allocate(b.addr, b.size, b.requested, b.stack, 0);
  out_.markRecordingStart();
  if (!trace) return;
  int64_t t0 = -1;
  for (size_t x = 0; x < trace->count() && t0 < 0; ++x) t0 = trace->timeUs[x];
  for (size_t x = 0; x < trace->count(); ++x) {
    const int64_t us = trace->timeUs[x];
    event(*trace, x, us >= 0 && t0 >= 0 ? double(us - t0) : double(x + 1));
    tick();
  }
}

/// "train.py:42" (the frame the Memory view labels a block by, the recorder's and allocator's own
/// frames skipped: labelFrame) and the op as it names it (opName); "(no frames)" without one.
std::pair<std::string, std::string> describe(const MemorySnapshot& s, StackId stack) {
  if (s.stacks[stack].empty()) return {"(no frames)", "(no frames)"};
  return {frameLabel(s.frames[labelFrame(s, s.stacks[stack])]), opName(s, s.stacks[stack])};
}

}  // namespace

void writeSnapshotStore(const MemorySnapshot& snapshot, const std::string& path,
                        const LoadOptions& options) {
  store::TimelineWriter out(path);
  const uint64_t total = snapshot.eventCount();
  Walker walker(snapshot, out, options, total);
  for (const size_t d : devicesWithMemory(snapshot)) {
    out.beginDevice(int64_t(d), "cuda:" + std::to_string(d));
    walker.device(d);
    out.endDevice();
  }
  for (StackId id = 0; id < snapshot.stacks.size(); ++id) {
    const auto [label, function] = describe(snapshot, id);
    out.addStack(id, label, function);
  }
  out.commit();
  if (options.progress) options.progress(total, total);
}

}  // namespace matmulviz::snapshot
