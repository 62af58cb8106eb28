#include "core/report/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <unordered_map>

namespace matmulviz {

namespace {

/// What one timeline holds, summarised for the comparison.
struct TimelineSummary {
  TimelinePeak allocated, reserved;
  std::map<std::string, int64_t> peakByLabel, peakByCategory;
  std::map<std::string, std::pair<int64_t, int64_t>> allocations;  ///< label: (count, bytes)
};

TimelineSummary summarise(const MemoryTimeline& t) {
  std::unordered_map<int64_t, const AllocationRecord*> records;
  for (const AllocationRecord& r : t.records) records.emplace(r.id, &r);
  auto labelOf = [&](int64_t id) -> std::string {
    const auto it = records.find(id);
    return it == records.end() ? "(unknown)" : it->second->label;
  };
  auto categoryOf = [&](int64_t id) {
    const auto it = records.find(id);
    return std::string(
        memoryCategoryName(it == records.end() ? MemoryCategory::Other : it->second->category));
  };
  TimelineSummary s;
  // The blocks alive after each event (id -> bytes), and a copy of them at the allocated peak.
  std::unordered_map<int64_t, int64_t> live, atPeak;
  for (size_t x = 0; x < t.events.size(); ++x) {
    const MemoryEvent& e = t.events[x];
    if (e.kind == MemoryEventKind::Alloc) {
      live[e.allocationId] = e.bytes;
      auto& [count, bytes] = s.allocations[labelOf(e.allocationId)];
      ++count, bytes += e.bytes;
    } else if (e.kind == MemoryEventKind::Free) {
      live.erase(e.allocationId);
    }
    if (s.allocated.event < 0 || e.after.allocatedBytes > s.allocated.bytes) {
      s.allocated = {e.after.allocatedBytes, int64_t(x), e.timeUs};
      atPeak = live;
    }
    if (s.reserved.event < 0 || e.after.reservedBytes > s.reserved.bytes)
      s.reserved = {e.after.reservedBytes, int64_t(x), e.timeUs};
  }
  for (const auto& [id, bytes] : atPeak) {
    s.peakByLabel[labelOf(id)] += bytes;
    s.peakByCategory[categoryOf(id)] += bytes;
  }
  return s;
}

/// Orders by |difference| (largest first), then by name.
template <class T, class Name>
void sortByDifference(std::vector<T>& v, Name name) {
  std::sort(v.begin(), v.end(), [&](const T& x, const T& y) {
    const int64_t dx = std::llabs(x.difference()), dy = std::llabs(y.difference());
    return dx != dy ? dx > dy : name(x) < name(y);
  });
}

/// The union of the names of `a` and `b`, each with its two values (0 where absent).
std::vector<BytesDiff> join(const std::map<std::string, int64_t>& a,
                            const std::map<std::string, int64_t>& b) {
  std::map<std::string, BytesDiff> rows;
  for (const auto& [name, bytes] : a) rows[name] = {name, bytes, 0};
  for (const auto& [name, bytes] : b) {
    BytesDiff& d = rows[name];
    d.name = name, d.b = bytes;
  }
  std::vector<BytesDiff> out;
  for (auto& [name, d] : rows) out.push_back(std::move(d));
  sortByDifference(out, [](const BytesDiff& d) -> const std::string& { return d.name; });
  return out;
}

std::vector<AllocationsDiff> joinAllocations(
    const std::map<std::string, std::pair<int64_t, int64_t>>& a,
    const std::map<std::string, std::pair<int64_t, int64_t>>& b) {
  std::map<std::string, AllocationsDiff> rows;
  for (const auto& [label, cb] : a) rows[label] = {label, cb.first, 0, cb.second, 0};
  for (const auto& [label, cb] : b) {
    AllocationsDiff& d = rows[label];
    d.label = label, d.countB = cb.first, d.bytesB = cb.second;
  }
  std::vector<AllocationsDiff> out;
  for (auto& [label, d] : rows) out.push_back(std::move(d));
  sortByDifference(out, [](const AllocationsDiff& d) -> const std::string& { return d.label; });
  return out;
}

const StrategyRun* findRun(const StrategiesReport& r, const std::string& strategy) {
  for (const StrategyRun& run : r.runs)
    if (run.strategy == strategy) return &run;
  return nullptr;
}

void fillSide(const StrategyRun* run, bool& in, bool& ok, std::string& error, int64_t& maxMem,
              int64_t& curMem, double& time, DeviceKind device) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  in = run != nullptr;
  ok = run && run->ok;
  error = run && !run->ok ? run->error : std::string();
  maxMem = ok ? run->peak.allocatedBytes : 0;
  curMem = ok ? run->current.allocatedBytes : 0;
  // The meta device measures no time (its runs move no data).
  time = ok && device != DeviceKind::Meta ? run->time.median : kNaN;
}

std::string workloadText(const Workload& w) {
  return "n " + std::to_string(w.n) + ", m " + std::to_string(w.m) + ", i " + std::to_string(w.i) +
         ", j " + std::to_string(w.j) + ", k " + std::to_string(w.k) + ", batch " +
         std::to_string(w.batch) + ", " + std::string(dtypeName(w.dtype));
}

std::vector<std::string> setupDifferences(const StrategiesReport& a, const StrategiesReport& b) {
  std::vector<std::string> out;
  const std::string wa = workloadText(a.workload), wb = workloadText(b.workload);
  if (wa != wb) out.push_back("workload: " + wa + " -> " + wb);
  if (a.device != b.device)
    out.push_back("device: " + std::string(deviceKindName(a.device)) + " -> " +
                  std::string(deviceKindName(b.device)));
  const std::string ga = a.runs.empty() ? "none" : a.runs.front().requiresGrad.text();
  const std::string gb = b.runs.empty() ? "none" : b.runs.front().requiresGrad.text();
  if (ga != gb) out.push_back("requires_grad: " + ga + " -> " + gb);
  return out;
}

}  // namespace

TimelineComparison compareTimelines(const MemoryTimeline& a, const MemoryTimeline& b) {
  const TimelineSummary sa = summarise(a), sb = summarise(b);
  TimelineComparison c;
  c.allocatedA = sa.allocated, c.allocatedB = sb.allocated;
  c.reservedA = sa.reserved, c.reservedB = sb.reserved;
  c.eventsA = int64_t(a.events.size()), c.eventsB = int64_t(b.events.size());
  c.peakByLabel = join(sa.peakByLabel, sb.peakByLabel);
  c.peakByCategory = join(sa.peakByCategory, sb.peakByCategory);
  c.allocationsByLabel = joinAllocations(sa.allocations, sb.allocations);
  return c;
}

StrategiesComparison compareStrategies(const StrategiesReport& a, const StrategiesReport& b) {
  StrategiesComparison c;
  std::vector<std::string> names;
  for (const StrategiesReport* r : {&a, &b})
    for (const StrategyRun& run : r->runs)
      if (std::find(names.begin(), names.end(), run.strategy) == names.end())
        names.push_back(run.strategy);
  for (const std::string& name : names) {
    StrategyDiff d;
    d.strategy = name;
    fillSide(findRun(a, name), d.inA, d.okA, d.errorA, d.maxMemA, d.curMemA, d.timeA, a.device);
    fillSide(findRun(b, name), d.inB, d.okB, d.errorB, d.maxMemB, d.curMemB, d.timeB, b.device);
    c.strategies.push_back(std::move(d));
  }
  c.setupDifferences = setupDifferences(a, b);
  return c;
}

}  // namespace matmulviz
