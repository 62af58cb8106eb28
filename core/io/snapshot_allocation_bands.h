#pragma once
// A PyTorch memory snapshot's active memory stacked by allocation, as PyTorch's viewer draws
// its "Active Memory Timeline" (torch/utils/viz/MemoryViz.js, process_alloc_data). Qt-free.
//
// The rule, in our words:
//  - Each 'alloc' of the device's trace is one allocation; so is each 'free_completed' of an
//    address the trace never allocated (its 'alloc' was before the recording) and each
//    'active_allocated' block of the device's segments that the trace allocated and did not
//    free (alive from before the recording to the snapshot). The last two are "alive at the
//    start": they are stacked first, in the reverse of that order.
//  - Only the `maxEntries` largest allocations (by size; equal sizes in the order above) are
//    drawn one by one; all the others add up into one summarised band drawn above them.
//  - The x axis counts steps, not time: an alloc or a free of any allocation is one step. A
//    drawn allocation starts at the top of the stack. When one is freed, its band ends and every
//    band above it slides down by its size over the next 3 steps (the viewer's animation: the
//    picture stays readable when a block low in the stack goes).
//  - A trace with no alloc or free but blocks alive shows them all flat over one step.
// Where we differ: an 'alloc' at an address still alive first frees the earlier allocation (its
// 'free_completed' is missing), as toMemoryTimeline does (the viewer keeps both forever); the
// peak is the largest total over all steps (the viewer's max_size skips steps that only changed
// the summarised band); and when the bands would need more than `maxPoints` vertices (each free
// adds two to every band above it), maxEntries is halved until they fit, so memory and time stay
// bounded (the viewer has no such bound). Sizes are bytes as the trace gives them (the block's
// size); a segment block alive from the start counts its requested_size, as the viewer does.

#include "core/io/memory_snapshot.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace matmulviz::snapshot {

/// The viewer's default for how many allocations to draw one by one (its "Detail" slider).
inline constexpr size_t kBandsMaxEntries = 15000;
/// Vertices of all bands together: 16 bytes each, so at most 64 MiB.
inline constexpr size_t kBandsMaxPoints = 4'000'000;

/// One allocation of the chart.
struct BandElement {
  int64_t addr = 0;
  int64_t size = 0;  ///< bytes
  StackId stack = 0;
  int64_t allocEvent = -1;  ///< index of its 'alloc' in the device's trace; -1: before the trace
  int64_t freeEvent = -1;   ///< index of its 'free_completed'; -1: alive at the end
};

/// One allocation drawn on its own: a polygon from offsets[i] to offsets[i] + size at steps[i].
struct AllocationBand {
  uint32_t element = 0;          ///< index in AllocationBands::elements
  std::vector<double> steps;     ///< x of each vertex, ascending
  std::vector<int64_t> offsets;  ///< bytes below the band at that step
};

struct AllocationBands {
  std::vector<BandElement> elements;
  std::vector<AllocationBand> bands;  ///< in the order they were allocated
  /// The summarised band: at summarySteps[i] from summaryOffsets[i] up by summarySizes[i].
  std::vector<double> summarySteps;
  std::vector<int64_t> summaryOffsets;
  std::vector<int64_t> summarySizes;
  std::vector<int64_t> totalAtStep;  ///< bytes alive over step i (all bands and the summary)
  /// For each alloc or free: the step it starts at and its index in the trace (-1: none).
  std::vector<double> actionSteps;
  std::vector<int64_t> actionEvents;
  int64_t peakBytes = 0;
  double peakStep = 0;    ///< the first step at the peak
  size_t maxEntries = 0;  ///< the cap used (less than asked when the vertex budget was hit)
  size_t stepCount() const { return totalAtStep.size(); }
};

/// The bands of device `device` (an index of snapshot.traces; one without a trace has only its
/// segments' blocks). `maxEntries`: how many allocations to draw one by one; `maxPoints`: the
/// vertex budget (see above). Work: O(events log events + vertices). Never throws for a
/// snapshot that readMemorySnapshot accepted (std::bad_alloc aside).
AllocationBands allocationBands(const MemorySnapshot& snapshot, size_t device,
                                size_t maxEntries = kBandsMaxEntries,
                                size_t maxPoints = kBandsMaxPoints);

/// bandAt's answer for the summarised band.
inline constexpr int kSummaryBand = -2;
/// The band under (step, bytes): an index of bands, kSummaryBand, or -1 for none. Bands are
/// linear between their vertices, as the viewer's polygons are.
int bandAt(const AllocationBands& bands, double step, double bytes);
/// The bottom of band `band` at `step` in bytes (linear between vertices); -1 outside its life.
double bandOffsetAt(const AllocationBand& band, double step);
/// The trace event of the action at `step` (the last action starting at or before it); -1.
int64_t eventAtStep(const AllocationBands& bands, double step);

}  // namespace matmulviz::snapshot
