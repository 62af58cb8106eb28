#include "core/io/allocator_history.h"

#include "core/io/snapshot_timeline.h"

#include <algorithm>
#include <limits>
#include <unordered_set>

namespace matmulviz::snapshot {

AllocatorHistory::AllocatorHistory(std::shared_ptr<const MemorySnapshot> snapshot, size_t device,
                                   size_t interval, size_t budgetBytes)
    : snapshot_(std::move(snapshot)),
      device_(device),
      interval_(std::max<size_t>(1, interval)),
      budget_(budgetBytes) {
  const MemorySnapshot& s = *snapshot_;
  const DeviceTrace* trace = device < s.traces.size() ? &s.traces[device] : nullptr;
  events_ = trace ? static_cast<int64_t>(trace->count()) : 0;
  detail::Replay r = detail::Replay::fromSnapshot(s, device);
  for (int64_t x = events_ - 1; x >= 0; --x) {
    if ((static_cast<uint64_t>(x) + 1) % interval_ == 0) keep(x, r);
    r.undo(*trace, static_cast<size_t>(x));
  }
  traceOfRow_ = timelineTraceEvents(s, device);
}

// Keeps the state after `event`; over the budget, drops every other checkpoint and doubles the
// interval until the rest fit (the last one standing goes too when it alone is too big).
void AllocatorHistory::keep(int64_t event, const detail::Replay& r) {
  detail::FlatReplay flat = detail::FlatReplay::of(r);
  bytes_ += flat.bytes();
  checkpoints_.emplace(event, std::move(flat));
  while (bytes_ > budget_ && !checkpoints_.empty()) {
    if (interval_ > std::numeric_limits<size_t>::max() / 2) {
      checkpoints_.clear();
      bytes_ = 0;
      break;
    }
    interval_ *= 2;
    for (auto it = checkpoints_.begin(); it != checkpoints_.end();) {
      if ((static_cast<uint64_t>(it->first) + 1) % interval_ == 0) {
        ++it;
        continue;
      }
      bytes_ -= it->second.bytes();
      it = checkpoints_.erase(it);
    }
  }
}

AllocatorState AllocatorHistory::stateAfter(int64_t event) const {
  event = std::clamp<int64_t>(event, -1, events_ - 1);
  const auto it = checkpoints_.lower_bound(event);
  int64_t from = events_ - 1;
  detail::Replay r;
  if (it != checkpoints_.end()) {
    r = it->second.restore();
    from = it->first;
  } else {
    r = detail::Replay::fromSnapshot(*snapshot_, device_);
  }
  const DeviceTrace* trace = events_ > 0 ? &snapshot_->traces[device_] : nullptr;
  for (int64_t x = from; x > event; --x) r.undo(*trace, static_cast<size_t>(x));
  return r.materialize(event);
}

int64_t AllocatorHistory::traceEventOfTimelineRow(int64_t row) const {
  if (row < 0 || row >= timelineEventCount()) return -1;
  return static_cast<int64_t>(traceOfRow_[static_cast<size_t>(row)]) - 1;
}

int64_t AllocatorHistory::timelineRowOfTraceEvent(int64_t event) const {
  if (event < -1) return -1;
  const uint64_t key = static_cast<uint64_t>(event) + 1;  // rows store event + 1
  const auto it =
      std::upper_bound(traceOfRow_.begin(), traceOfRow_.end(), key,
                       [](uint64_t k, uint32_t v) { return k < static_cast<uint64_t>(v); });
  return static_cast<int64_t>(it - traceOfRow_.begin()) - 1;
}

// The rows snapshot_timeline.cpp's Builder pushes: a segment row at time 0 when segments were
// there before the trace, each block alive before it (a 'free' first when its address is taken),
// then per event: 'alloc' one row (two when its address is still alive), 'free_completed' one
// when its block is alive, segment events and 'oom' one, 'free_requested' and 'snapshot' none.
std::vector<uint32_t> timelineTraceEvents(const MemorySnapshot& s, size_t device) {
  std::vector<uint32_t> rows;
  std::unordered_set<int64_t> live;
  if (reservedAtStart(s, device) > 0) rows.push_back(0);
  for (const InitialBlock& b : initialBlocks(s, device)) {
    if (!live.insert(b.addr).second) rows.push_back(0);
    rows.push_back(0);
  }
  const DeviceTrace* trace = device < s.traces.size() ? &s.traces[device] : nullptr;
  const size_t n = trace ? std::min<size_t>(trace->count(), UINT32_MAX - 1) : 0;
  for (size_t x = 0; x < n; ++x) {
    const uint32_t row = static_cast<uint32_t>(x + 1);
    switch (trace->action[x]) {
      case TraceAction::Alloc:
        if (!live.insert(trace->addr[x]).second) rows.push_back(row);
        rows.push_back(row);
        break;
      case TraceAction::FreeCompleted:
        if (live.erase(trace->addr[x])) rows.push_back(row);
        break;
      case TraceAction::SegmentAlloc:
      case TraceAction::SegmentMap:
      case TraceAction::SegmentFree:
      case TraceAction::SegmentUnmap:
      case TraceAction::Oom:
        rows.push_back(row);
        break;
      case TraceAction::FreeRequested:
      case TraceAction::Snapshot:
        break;
    }
  }
  return rows;
}

}  // namespace matmulviz::snapshot
