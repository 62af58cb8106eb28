#include "core/report/allocation_sequence.h"

#include "core/io/snapshot_frames.h"
#include "core/io/snapshot_timeline.h"
#include "core/io/timeline_store.h"
#include "core/memory/memory_event.h"
#include "core/report/record_mark_timeline.h"
#include "core/util/saturating.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace matmulviz {

namespace {

std::string baseName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// Builds a sequence: interns sites, keeps the live requests by a key (an allocation id or an
/// address) and the totals.
class Builder {
 public:
  explicit Builder(const std::string& name) {
    s_.name = name;
    s_.sites.push_back({"(unknown)", ""});
  }
  int32_t site(const std::string& op, const std::string& where) {
    const auto [it, added] = siteIds_.try_emplace(op + '\n' + where, int32_t(s_.sites.size()));
    if (added) s_.sites.push_back({op, where});
    return it->second;
  }
  /// A block alive before the start.
  void before(int64_t key, int64_t bytes, int32_t site) {
    live_[key] = {bytes, site};
    requested_ = addSaturating(requested_, bytes);
  }
  void startAt(int64_t reserved, std::string words) {
    s_.startRequested = requested_;
    s_.startReserved = reserved_ = reserved;
    s_.startBlocks = int64_t(live_.size());
    s_.start = std::move(words);
  }
  void alloc(int64_t key, int64_t bytes, int32_t site, int64_t source) {
    if (live_.contains(key)) free(key, source);  // its free is missing
    live_[key] = {bytes, site};
    requested_ = addSaturating(requested_, bytes);
    s_.events.push_back({true, bytes, requested_, reserved_, source, site});
  }
  void free(int64_t key, int64_t source) {
    const auto it = live_.find(key);
    if (it == live_.end()) return;  // allocated before anything this side holds
    const Live b = it->second;
    live_.erase(it);
    requested_ = std::max<int64_t>(0, subSaturating(requested_, b.bytes));
    s_.events.push_back({false, b.bytes, requested_, reserved_, source, b.site});
  }
  /// A block freed before the start: no event.
  void forget(int64_t key) {
    const auto it = live_.find(key);
    if (it == live_.end()) return;
    requested_ = std::max<int64_t>(0, subSaturating(requested_, it->second.bytes));
    live_.erase(it);
  }
  void reserved(int64_t bytes) { reserved_ = bytes; }
  void segment(int64_t delta) { reserved_ = std::max<int64_t>(0, addSaturating(reserved_, delta)); }
  AllocationSequence take() { return std::move(s_); }

 private:
  struct Live {
    int64_t bytes = 0;
    int32_t site = 0;
  };
  AllocationSequence s_;
  std::unordered_map<std::string, int32_t> siteIds_;
  std::unordered_map<int64_t, Live> live_;
  int64_t requested_ = 0, reserved_ = 0;
};

std::string blocksText(int64_t blocks) {
  return std::to_string(blocks) + (blocks == 1 ? " block" : " blocks");
}

}  // namespace

AllocationSequence sequenceOfPythonReport(const PythonReport& report, const std::string& name) {
  Builder b(name);
  // The first event after the record mark (its "event" is the number of events before it).
  const std::optional<size_t> mark = recordMarkStart(report);
  const size_t start = mark.value_or(0);
  const bool marked = mark.has_value();
  const std::optional<size_t> dump = marked ? dumpMarkEnd(report, start) : std::nullopt;
  const size_t end = dump.value_or(report.events.size());
  std::unordered_map<int64_t, int32_t> siteOf;  // allocation id -> site
  auto siteOfId = [&](int64_t id) {
    if (const auto it = siteOf.find(id); it != siteOf.end()) return it->second;
    const PythonAllocation* a = report.allocation(id);
    int32_t s = 0;
    if (a) {
      const std::string op = a->op >= 0 && size_t(a->op) < report.ops.size()
                                 ? report.ops[size_t(a->op)]
                                 : std::string("(unknown)");
      std::string where;
      if (a->frame >= 0 && size_t(a->frame) < report.frames.size()) {
        const PythonFrame& f = report.frames[size_t(a->frame)];
        where = baseName(f.file) + ":" + std::to_string(f.line);
        if (!f.code.empty()) where += " `" + f.code + "`";
      }
      s = b.site(op, where);
    }
    siteOf.emplace(id, s);
    return s;
  };
  auto requestOf = [&](const MemoryEvent& e) {
    const PythonAllocation* a = report.allocation(e.allocationId);
    return a ? a->requestedBytes : e.bytes;
  };
  int64_t reserved = 0;
  for (size_t x = 0; x < start; ++x) {
    const MemoryEvent& e = report.events[x];
    if (e.kind == MemoryEventKind::Alloc)
      b.before(e.allocationId, requestOf(e), siteOfId(e.allocationId));
    else if (e.kind == MemoryEventKind::Free)
      b.forget(e.allocationId);
    reserved = e.after.reservedBytes;
  }
  b.startAt(reserved, marked ? "after the script's torch.cuda.memory._record_memory_history()"
                             : "at the run's first event (the script never called "
                               "torch.cuda.memory._record_memory_history())");
  for (size_t x = start; x < end; ++x) {
    const MemoryEvent& e = report.events[x];
    b.reserved(e.after.reservedBytes);
    if (e.kind == MemoryEventKind::Alloc)
      b.alloc(e.allocationId, requestOf(e), siteOfId(e.allocationId), int64_t(x));
    else if (e.kind == MemoryEventKind::Free)
      b.free(e.allocationId, int64_t(x));
  }
  AllocationSequence s = b.take();
  if (marked) s.start += ", " + blocksText(s.startBlocks) + " alive then";
  if (dump) s.start += "; up to its torch.cuda.memory._dump_snapshot()";
  return s;
}

AllocationSequence sequenceOfSnapshot(const snapshot::MemorySnapshot& snap, size_t device,
                                      const std::string& name) {
  using snapshot::TraceAction;
  Builder b(name);
  std::unordered_map<snapshot::StackId, int32_t> siteOf;
  auto siteOfStack = [&](snapshot::StackId stack) {
    if (const auto it = siteOf.find(stack); it != siteOf.end()) return it->second;
    const auto& frames = snap.stacks[stack];
    int32_t s = 0;
    if (frames.empty()) {
      s = b.site("(no frames)", "");
    } else {
      // The op as the Memory view names it (the innermost dispatcher op, else the Python
      // function), the place as the program's own frame: the same as sequenceOfStore reads.
      s = b.site(snapshot::opName(snap, frames),
                 snapshot::frameLabel(snap.frames[snapshot::labelFrame(snap, frames)]));
    }
    siteOf.emplace(stack, s);
    return s;
  };
  for (const snapshot::InitialBlock& blk : snapshot::initialBlocks(snap, device))
    b.before(blk.addr, blk.requested, siteOfStack(blk.stack));
  const int64_t reserved = snapshot::reservedAtStart(snap, device);
  b.startAt(reserved, "at the snapshot's first traced event");
  const snapshot::DeviceTrace* trace = device < snap.traces.size() ? &snap.traces[device] : nullptr;
  for (size_t x = 0; trace && x < trace->count(); ++x) {
    const int64_t size = trace->size[x];
    switch (trace->action[x]) {
      case TraceAction::Alloc:
        b.alloc(trace->addr[x], size, siteOfStack(trace->stack[x]), int64_t(x));
        break;
      case TraceAction::FreeCompleted:
        b.free(trace->addr[x], int64_t(x));
        break;
      case TraceAction::SegmentAlloc:
      case TraceAction::SegmentMap:
        b.segment(size);
        break;
      case TraceAction::SegmentFree:
      case TraceAction::SegmentUnmap:
        b.segment(-size);
        break;
      case TraceAction::FreeRequested:
      case TraceAction::Snapshot:
      case TraceAction::Oom:
        break;
    }
  }
  AllocationSequence s = b.take();
  s.start += " (" + blocksText(s.startBlocks) + " alive before the recording)";
  return s;
}

AllocationSequence sequenceOfStore(const store::TimelineStore& st, size_t device,
                                   const std::string& name) {
  const store::DeviceInfo& info = st.devices().at(device);
  Builder b(name);
  std::unordered_map<uint32_t, int32_t> siteOf;
  auto siteOfStack = [&](uint32_t stack) {
    if (const auto it = siteOf.find(stack); it != siteOf.end()) return it->second;
    const auto [label, function] = st.stack(stack);
    const int32_t s = label == "(no frames)" || label.empty() ? b.site("(no frames)", "")
                                                              : b.site(function, label);
    siteOf.emplace(stack, s);
    return s;
  };
  // The store keeps the counters after each event: reserved is read; an alloc's request is the
  // step of the requested counter (its `bytes` is the block's size for a block placed at the
  // start).
  constexpr int64_t kBatch = 65536;
  int64_t reserved = 0, requestedBefore = 0;
  bool started = false;
  for (int64_t first = 0; first < info.events; first += kBatch) {
    const std::vector<store::StoredEvent> events = st.events(info.id, first, kBatch);
    for (size_t k = 0; k < events.size(); ++k) {
      const store::StoredEvent& e = events[k];
      const int64_t x = first + int64_t(k);
      if (!started && x >= info.recordingStart) {
        b.startAt(reserved, "at the snapshot's first traced event");
        started = true;
      }
      const auto kind = static_cast<MemoryEventKind>(e.kind);
      const int64_t request = std::max<int64_t>(0, e.requested - requestedBefore);
      requestedBefore = e.requested;
      if (!started) {
        if (kind == MemoryEventKind::Alloc) b.before(e.addr, request, siteOfStack(e.stack));
        reserved = e.reserved;
        continue;
      }
      b.reserved(e.reserved);
      if (kind == MemoryEventKind::Alloc)
        b.alloc(e.addr, request, siteOfStack(e.stack), x);
      else if (kind == MemoryEventKind::Free)
        b.free(e.addr, x);
    }
    if (events.empty()) break;
  }
  if (!started) b.startAt(reserved, "at the snapshot's first traced event");
  AllocationSequence s = b.take();
  s.start += " (" + blocksText(s.startBlocks) + " alive before the recording)";
  return s;
}

}  // namespace matmulviz
