#pragma once
// Two allocation sequences (core/report/allocation_sequence.h) aligned event by event: "my script
// on matmulviz, my script on my GPU, here is where they part". Qt-free; what `matmulviz-cli
// compare RUN.json SNAPSHOT.pickle` prints and the Compare window's Events page shows.
//
// The alignment rule, by kind (alloc or free), size and order:
//  - event i of A and event j of B match when both are allocs, or both frees, of the same
//    request size (bytes); then the walk goes on with i + 1 and j + 1;
//  - a run of frees (the frees between two allocations, or up to the end) matches as a whole
//    when both sides' runs hold the same sizes, in any order: paired by size in A's order, with
//    the totals compared at the run's end. One release frees its blocks in an order that depends
//    on who tells the allocator (PyTorch's C++ frees a tensor's autograd graph before its
//    storage, where a simulation hears of the tensor first; Python 3.11 and 3.12 release a
//    function's locals in different orders), and the order of the frees between two
//    allocations changes no later allocation: freed neighbours merge the same way;
//  - where they do not, the walk looks for the shortest run of events on one side only: the
//    smallest k (1 to kResyncWindow) such that the kResyncRun events from i + k of A match those
//    from j of B (then A's events i .. i + k - 1 are "only in A"), or the same with B's j + k
//    against A's i ("only in B"); A is tried first at each k. When neither is found, i and j are
//    one row of "size differs" (or "kind differs") and the walk goes on with i + 1 and j + 1;
//  - what is left of either side at the end is "only" on that side.
// The first row that is not a match is the first divergence. Totals are compared at every
// matched row: the live requests' bytes, and memory_reserved where both sides have it, each as
// A, B and B - A; a side's totals also hold what was alive at its start, so the comparison
// reports where B - A first differs from B - A at the start ("drift").

#include "core/report/allocation_sequence.h"

#include <cstdint>
#include <string>
#include <vector>

namespace matmulviz {

inline constexpr int64_t kResyncWindow = 64;
inline constexpr int64_t kResyncRun = 4;

enum class AlignedKind : uint8_t {
  Match,        ///< same kind, same size
  SizeDiffers,  ///< same kind, another size
  KindDiffers,  ///< an alloc against a free
  OnlyA,        ///< an event of A with none in B
  OnlyB,        ///< an event of B with none in A
};
/// "match", "size differs", "kind differs", "only in A", "only in B".
const char* alignedKindName(AlignedKind kind);

struct AlignedRow {
  AlignedKind kind = AlignedKind::Match;
  int64_t a = -1, b = -1;  ///< indices into each sequence's events; -1 where that side has none
};

struct SequenceAlignment {
  std::string nameA, nameB;
  std::vector<AlignedRow> rows;
  int64_t matched = 0;           ///< rows of kind Match
  int64_t firstDivergence = -1;  ///< the first row that is not a match; -1: none
  /// The first matched row where B - A of the live requests (of reserved) differs from B - A at
  /// the start; -1: none.
  int64_t firstRequestedDrift = -1;
  int64_t firstReservedDrift = -1;
  bool bothReserved = false;  ///< both sides carry memory_reserved
  bool diverges() const { return firstDivergence >= 0; }
};

/// Aligns `a` with `b` (see the file comment). Linear in the events, times kResyncWindow *
/// kResyncRun at each divergence. Never throws beyond std::bad_alloc.
SequenceAlignment alignSequences(const AllocationSequence& a, const AllocationSequence& b);

/// One event in words: "alloc 768000 B (750 KiB) by bmm at prog.py:12 `out = ...`".
std::string describeEvent(const AllocationSequence& s, int64_t event);

/// The first divergence in words, one line: "event 5 of A (alloc 4000 B by empty at x.py:9)
/// against event 5 of B (alloc 768000 B ...)"; "no divergence (N events matched)" when none.
std::string describeDivergence(const SequenceAlignment& al, const AllocationSequence& a,
                               const AllocationSequence& b);

}  // namespace matmulviz
