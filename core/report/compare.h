#pragma once
// The difference of two memory timelines and of two strategies reports, as heaptrack's diff
// mode shows two profiles: A, B and B - A for the peaks, for the bytes alive at the peak by
// label and by category, and for every label's allocations over the run; per strategy (matched
// by name) its maxMem, curMem and median time. Qt-free; what `matmulviz-cli compare` prints and
// the app's Compare window shows.

#include "core/report/strategies_report.h"

#include <cstdint>
#include <string>
#include <vector>

namespace matmulviz {

/// One quantity in bytes of A and of B (a label's bytes alive at the peak, a category's).
struct BytesDiff {
  std::string name;  ///< the label ("c[q]") or the category ("gathered copy")
  int64_t a = 0, b = 0;
  int64_t difference() const { return b - a; }
};

/// One label's allocations over a whole timeline: how many blocks, and their block bytes summed
/// (what memory_allocated counted for each when it was handed out).
struct AllocationsDiff {
  std::string label;
  int64_t countA = 0, countB = 0;
  int64_t bytesA = 0, bytesB = 0;
  int64_t difference() const { return bytesB - bytesA; }
};

/// The highest value of one counter over a timeline, and the first event that reaches it.
struct TimelinePeak {
  int64_t bytes = 0;
  int64_t event = -1;  ///< index into MemoryTimeline::events; -1 for a timeline with no events
  double timeUs = 0;   ///< that event's time, microseconds since the allocator was made
};

struct TimelineComparison {
  TimelinePeak allocatedA, allocatedB;  ///< memory_allocated's peak (maxMem, backward included)
  TimelinePeak reservedA, reservedB;    ///< memory_reserved's peak
  int64_t eventsA = 0, eventsB = 0;
  /// Block bytes alive at each timeline's allocated peak, summed by label, then by category
  /// (memoryCategoryName); each list sorted by |B - A| (largest first), then by name. A name
  /// alive at only one of the peaks has 0 on the other side. The labels of each side sum to its
  /// allocated peak.
  std::vector<BytesDiff> peakByLabel, peakByCategory;
  /// Every label's allocations over the whole timeline, sorted by |bytesB - bytesA|, then label.
  std::vector<AllocationsDiff> allocationsByLabel;
};

/// Compares timeline `a` with `b` (B - A). Walks each timeline's events once: an Alloc event
/// makes its allocation alive, a Free event ends it; the allocated peak is the first event whose
/// `after.allocatedBytes` is the largest (as MemoryTimelineModel::peakEvent and PyTorch's
/// max_memory_allocated). An event whose allocation id has no record counts under the label
/// "(unknown)" and the category "other". Never throws beyond std::bad_alloc.
TimelineComparison compareTimelines(const MemoryTimeline& a, const MemoryTimeline& b);

/// One strategy of each report, matched by name. Bytes and seconds; NaN where not measured (the
/// meta device, a failed run, a strategy that is on one side only).
struct StrategyDiff {
  std::string strategy;
  bool inA = false, inB = false;     ///< ran in that report (ok or not)
  bool okA = false, okB = false;     ///< ran without error
  std::string errorA, errorB;        ///< the run's message when it failed
  int64_t maxMemA = 0, maxMemB = 0;  ///< max_memory_allocated since the inputs were made
  int64_t curMemA = 0, curMemB = 0;  ///< memory_allocated after `out = strategy(...)`
  double timeA = 0, timeB = 0;       ///< median seconds of the warm runs; NaN when unknown
  int64_t maxMemDifference() const { return maxMemB - maxMemA; }
  int64_t curMemDifference() const { return curMemB - curMemA; }
  double timeDifference() const { return timeB - timeA; }
};

struct StrategiesComparison {
  /// Every strategy of A in A's order, then those only in B in B's order.
  std::vector<StrategyDiff> strategies;
  /// What differs in how the two were run, one line each: "requires_grad: none -> a,c",
  /// "workload: n 4096 -> 8192", "device: cpu -> meta". Empty when they were run alike.
  std::vector<std::string> setupDifferences;
};

/// Compares report `a` with `b` (B - A): strategies matched by name (the first run of a name in
/// each report), and what differs in their workload, device and requires_grad.
StrategiesComparison compareStrategies(const StrategiesReport& a, const StrategiesReport& b);

}  // namespace matmulviz
