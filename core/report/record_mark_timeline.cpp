#include "core/report/record_mark_timeline.h"

#include "core/report/allocation_sequence.h"
#include "core/util/saturating.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace matmulviz {

std::optional<size_t> recordMarkStart(const PythonReport& report) {
  for (const PythonMark& m : report.marks)
    if (m.name == kRecordMark && m.event)
      return std::min(size_t(std::max<int64_t>(0, *m.event)), report.events.size());
  return std::nullopt;
}

std::optional<size_t> dumpMarkEnd(const PythonReport& report, size_t start) {
  for (const PythonMark& m : report.marks)
    if (m.name == kDumpMark && m.event && size_t(std::max<int64_t>(0, *m.event)) >= start)
      return std::min(size_t(*m.event), report.events.size());
  return std::nullopt;
}

MemoryTimeline timelineFromEvent(const MemoryTimeline& run, size_t start, size_t end) {
  end = std::min(end, run.events.size());
  start = std::min(start, end);
  MemoryTimeline out;
  out.records = run.records;
  out.opNames = run.opNames;
  out.aliveWhy = run.aliveWhy;
  // The state at `start`: blocks alive (by allocation order, i.e. record id) and reserved bytes.
  std::map<int64_t, int32_t> alive;  // record id -> the op of its allocation
  int64_t reserved = 0;
  for (size_t x = 0; x < start; ++x) {
    const MemoryEvent& e = run.events[x];
    if (e.kind == MemoryEventKind::Alloc) alive[e.allocationId] = e.opId;
    if (e.kind == MemoryEventKind::Free) alive.erase(e.allocationId);
    reserved = e.after.reservedBytes;
  }
  const double t0 = start < end ? run.events[start].timeUs : 0;
  MemoryCounters now;
  now.reservedBytes = reserved;
  if (reserved > 0) out.events.push_back({MemoryEventKind::SegmentAlloc, -1, reserved, 0, now, 0});
  std::unordered_map<int64_t, size_t> recordOf;  // record id -> index in run.records
  for (size_t r = 0; r < run.records.size(); ++r) recordOf[run.records[r].id] = r;
  for (const auto& [id, op] : alive) {
    const auto found = recordOf.find(id);
    const AllocationRecord* r = found == recordOf.end() ? nullptr : &run.records[found->second];
    const int64_t bytes = r ? r->blockBytes : 0;
    now.allocatedBytes = addSaturating(now.allocatedBytes, bytes);
    now.requestedBytes = addSaturating(now.requestedBytes, r ? r->requestedBytes : 0);
    out.events.push_back({MemoryEventKind::Alloc, id, bytes, 0, now, op});
  }
  for (size_t x = start; x < end; ++x) {
    MemoryEvent e = run.events[x];
    e.timeUs = std::max(0.0, e.timeUs - t0);
    out.events.push_back(e);
  }
  for (CachingAllocator::OpSpan s : run.spans) {
    if (s.endUs < t0) continue;
    s.beginUs = std::max(0.0, s.beginUs - t0);
    s.endUs -= t0;
    out.spans.push_back(s);
  }
  out.statementEndUs = std::max(0.0, run.statementEndUs - t0);
  return out;
}

std::optional<MemoryTimeline> timelineFromRecordMark(const PythonReport& report,
                                                     const MemoryTimeline& run) {
  const std::optional<size_t> start = recordMarkStart(report);
  if (!start) return std::nullopt;
  return timelineFromEvent(run, *start, dumpMarkEnd(report, *start).value_or(run.events.size()));
}

}  // namespace matmulviz
