#include "core/report/sequence_alignment.h"

#include "core/util/format_units.h"

#include <algorithm>

namespace matmulviz {

namespace {

bool same(const SequenceEvent& x, const SequenceEvent& y) {
  return x.alloc == y.alloc && x.bytes == y.bytes;
}

/// True when the `run` events from i of A match those from j of B (fewer at an end: those left,
/// but at least one on each side).
bool runMatches(const std::vector<SequenceEvent>& a, size_t i, const std::vector<SequenceEvent>& b,
                size_t j) {
  if (i >= a.size() || j >= b.size()) return false;
  const size_t n = std::min<size_t>({size_t(kResyncRun), a.size() - i, b.size() - j});
  for (size_t k = 0; k < n; ++k)
    if (!same(a[i + k], b[j + k])) return false;
  return true;
}

/// The number of frees from i on.
size_t freeRun(const std::vector<SequenceEvent>& e, size_t i) {
  size_t n = 0;
  while (i + n < e.size() && !e[i + n].alloc) ++n;
  return n;
}

/// For runs of `n` frees from i of A and from j of B holding the same sizes: for each free of
/// A's run in order, the B event it pairs with (the first unpaired one of its size); empty when
/// the sizes differ.
std::vector<size_t> pairFrees(const std::vector<SequenceEvent>& a, size_t i,
                              const std::vector<SequenceEvent>& b, size_t j, size_t n) {
  std::vector<size_t> pairs;
  std::vector<bool> used(n, false);
  for (size_t k = 0; k < n; ++k) {
    size_t m = 0;
    while (m < n && (used[m] || b[j + m].bytes != a[i + k].bytes)) ++m;
    if (m == n) return {};
    used[m] = true;
    pairs.push_back(j + m);
  }
  return pairs;
}

}  // namespace

const char* alignedKindName(AlignedKind kind) {
  switch (kind) {
    case AlignedKind::Match:
      return "match";
    case AlignedKind::SizeDiffers:
      return "size differs";
    case AlignedKind::KindDiffers:
      return "kind differs";
    case AlignedKind::OnlyA:
      return "only in A";
    case AlignedKind::OnlyB:
      return "only in B";
  }
  return "?";
}

SequenceAlignment alignSequences(const AllocationSequence& sa, const AllocationSequence& sb) {
  const std::vector<SequenceEvent>& a = sa.events;
  const std::vector<SequenceEvent>& b = sb.events;
  SequenceAlignment out;
  out.nameA = sa.name, out.nameB = sb.name;
  out.bothReserved = sa.hasReserved() && sb.hasReserved();
  const int64_t requestedAtStart = sb.startRequested - sa.startRequested;
  const int64_t reservedAtStart = sb.startReserved - sa.startReserved;
  // checkA, checkB: the events whose totals the row compares (a run of frees: its last ones).
  auto push = [&](AlignedKind kind, int64_t i, int64_t j, int64_t checkA = -2,
                  int64_t checkB = -2) {
    out.rows.push_back({kind, i, j});
    const int64_t row = int64_t(out.rows.size()) - 1;
    if (kind != AlignedKind::Match) {
      if (out.firstDivergence < 0) out.firstDivergence = row;
      return;
    }
    ++out.matched;
    if (checkA == -1) return;  // inside a run of frees
    const SequenceEvent& x = a[size_t(checkA == -2 ? i : checkA)];
    const SequenceEvent& y = b[size_t(checkB == -2 ? j : checkB)];
    if (out.firstRequestedDrift < 0 && y.requested - x.requested != requestedAtStart)
      out.firstRequestedDrift = row;
    if (out.bothReserved && out.firstReservedDrift < 0 &&
        y.reserved - x.reserved != reservedAtStart)
      out.firstReservedDrift = row;
  };
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (!a[i].alloc && !b[j].alloc) {
      const size_t n = freeRun(a, i);
      if (n > 1 && n == freeRun(b, j)) {
        const std::vector<size_t> pairs = pairFrees(a, i, b, j, n);
        if (!pairs.empty()) {
          for (size_t k = 0; k < n; ++k)
            push(AlignedKind::Match, int64_t(i + k), int64_t(pairs[k]),
                 k + 1 < n ? -1 : int64_t(i + n - 1), int64_t(j + n - 1));
          i += n, j += n;
          continue;
        }
      }
    }
    if (same(a[i], b[j])) {
      push(AlignedKind::Match, int64_t(i++), int64_t(j++));
      continue;
    }
    size_t skipA = 0, skipB = 0;
    for (size_t k = 1; k <= size_t(kResyncWindow) && !skipA && !skipB; ++k) {
      if (runMatches(a, i + k, b, j))
        skipA = k;
      else if (runMatches(a, i, b, j + k))
        skipB = k;
    }
    if (skipA) {
      for (size_t k = 0; k < skipA; ++k) push(AlignedKind::OnlyA, int64_t(i++), -1);
    } else if (skipB) {
      for (size_t k = 0; k < skipB; ++k) push(AlignedKind::OnlyB, -1, int64_t(j++));
    } else {
      push(a[i].alloc == b[j].alloc ? AlignedKind::SizeDiffers : AlignedKind::KindDiffers,
           int64_t(i), int64_t(j));
      ++i, ++j;
    }
  }
  for (; i < a.size(); ++i) push(AlignedKind::OnlyA, int64_t(i), -1);
  for (; j < b.size(); ++j) push(AlignedKind::OnlyB, -1, int64_t(j));
  return out;
}

std::string describeEvent(const AllocationSequence& s, int64_t event) {
  if (event < 0 || size_t(event) >= s.events.size()) return "none";
  const SequenceEvent& e = s.events[size_t(event)];
  const SequenceSite& site = s.sites[size_t(e.site)];
  std::string text = std::string(e.alloc ? "alloc " : "free ") + std::to_string(e.bytes) + " B";
  if (e.bytes >= 1024) text += " (" + formatSize(e.bytes) + ")";
  text += e.alloc ? " by " : " of a block allocated by ";
  text += site.op;
  if (!site.where.empty()) text += " at " + site.where;
  return text;
}

std::string describeDivergence(const SequenceAlignment& al, const AllocationSequence& a,
                               const AllocationSequence& b) {
  if (!al.diverges()) return "no divergence (" + std::to_string(al.matched) + " events matched)";
  const AlignedRow& r = al.rows[size_t(al.firstDivergence)];
  std::string text = "first divergence at row " + std::to_string(al.firstDivergence) + ", " +
                     alignedKindName(r.kind) + ": ";
  auto side = [&](const char* name, const AllocationSequence& s, int64_t x) {
    return x < 0 ? std::string(name) + ": nothing"
                 : std::string(name) + ": event " + std::to_string(x) + ", " + describeEvent(s, x);
  };
  return text + side("A", a, r.a) + "; " + side("B", b, r.b);
}

}  // namespace matmulviz
