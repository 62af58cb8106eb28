#include "core/report/compare_text.h"

#include "core/util/format_units.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace matmulviz {

namespace {

/// One line of a timeline's table; the name column is `width` wide (longer names widen it).
std::string row(int width, const std::string& name, const std::string& a, const std::string& b,
                const std::string& d) {
  char line[512];
  std::snprintf(line, sizeof line, "  %-*s %14s %14s %12s\n", width, name.c_str(), a.c_str(),
                b.c_str(), d.c_str());
  return line;
}

/// "c[q] (1 -> 2)": a label and its block counts.
std::string withCounts(const AllocationsDiff& x) {
  return x.label + " (" + std::to_string(x.countA) + " -> " + std::to_string(x.countB) + ")";
}

/// The name column's width: the longest name shown, at least 24, at most 60.
int nameWidth(const TimelineComparison& d, size_t maxRows) {
  size_t w = 24;
  auto fit = [&](const std::string& s) { w = std::max(w, std::min<size_t>(60, s.size())); };
  for (const BytesDiff& b : d.peakByCategory) fit(b.name);
  for (size_t i = 0; i < d.peakByLabel.size() && (!maxRows || i < maxRows); ++i)
    fit(d.peakByLabel[i].name);
  for (size_t i = 0; i < d.allocationsByLabel.size() && (!maxRows || i < maxRows); ++i)
    fit(withCounts(d.allocationsByLabel[i]));
  return int(w);
}

std::string size(int64_t bytes) {
  return formatSize(bytes);
}

/// "96 MiB @12": a peak and the event that first reaches it.
std::string peakText(const TimelinePeak& p) {
  return p.event < 0 ? std::string("-") : formatSize(p.bytes) + " @" + std::to_string(p.event);
}

void writeStrategies(std::ostream& os, const StrategiesComparison& s) {
  os << "\nstrategies (B - A):\n";
  char head[256];
  std::snprintf(head, sizeof head, "  %-10s %10s %10s %11s  %10s %10s %11s  %9s %9s %10s\n",
                "strategy", "maxMem A", "maxMem B", "B-A", "curMem A", "curMem B", "B-A", "time A",
                "time B", "B-A");
  os << head;
  for (const StrategyDiff& d : s.strategies) {
    auto mem = [](bool in, bool ok, int64_t b) {
      return !in ? std::string("absent") : ok ? formatSize(b) : std::string("failed");
    };
    const bool both = d.okA && d.okB;
    char line[256];
    std::snprintf(line, sizeof line, "  %-10s %10s %10s %11s  %10s %10s %11s  %9s %9s %10s\n",
                  d.strategy.c_str(), mem(d.inA, d.okA, d.maxMemA).c_str(),
                  mem(d.inB, d.okB, d.maxMemB).c_str(),
                  both ? formatSizeDifference(d.maxMemDifference()).c_str() : "-",
                  mem(d.inA, d.okA, d.curMemA).c_str(), mem(d.inB, d.okB, d.curMemB).c_str(),
                  both ? formatSizeDifference(d.curMemDifference()).c_str() : "-",
                  formatSeconds(d.timeA).c_str(), formatSeconds(d.timeB).c_str(),
                  formatSecondsDifference(d.timeDifference()).c_str());
    os << line;
  }
  for (const StrategyDiff& d : s.strategies) {
    if (d.inA && !d.okA) os << "  " << d.strategy << " failed in A: " << d.errorA << "\n";
    if (d.inB && !d.okB) os << "  " << d.strategy << " failed in B: " << d.errorB << "\n";
  }
}

template <class Rows, class Line>
void writeLimited(std::ostream& os, const Rows& rows, size_t maxRows, Line line) {
  size_t shown = 0;
  for (const auto& r : rows) {
    if (maxRows && shown == maxRows) break;
    os << line(r);
    ++shown;
  }
  if (shown < rows.size()) os << "  ... and " << rows.size() - shown << " more\n";
}

void writeTimeline(std::ostream& os, const ComparedTimeline& t, size_t maxRows) {
  const TimelineComparison& d = t.difference;
  const int w = nameWidth(d, maxRows);
  os << "\nmemory timeline: " << t.name << " (" << d.eventsA << " events in A, " << d.eventsB
     << " in B; ";
  if (t.startA.empty() && t.startB.empty())
    os << "the whole timeline, backward included when it ran";
  else  // a run beside a snapshot: both from where the recording started
    os << "A " << (t.startA.empty() ? "from its trace's start" : t.startA) << ", B "
       << (t.startB.empty() ? "from its trace's start" : t.startB);
  os << "; @N: the event)\n";
  os << row(w, "", "A", "B", "B-A");
  os << row(w, "peak allocated", peakText(d.allocatedA), peakText(d.allocatedB),
            formatSizeDifference(d.allocatedB.bytes - d.allocatedA.bytes));
  os << row(w, "peak reserved", peakText(d.reservedA), peakText(d.reservedB),
            formatSizeDifference(d.reservedB.bytes - d.reservedA.bytes));
  os << "alive at the peak, by category:\n";
  for (const BytesDiff& b : d.peakByCategory)
    os << row(w, b.name, size(b.a), size(b.b), formatSizeDifference(b.difference()));
  os << "alive at the peak, by label:\n";
  writeLimited(os, d.peakByLabel, maxRows, [w](const BytesDiff& b) {
    return row(w, b.name, size(b.a), size(b.b), formatSizeDifference(b.difference()));
  });
  os << "allocated over the run, by label (blocks A -> B):\n";
  writeLimited(os, d.allocationsByLabel, maxRows, [w](const AllocationsDiff& x) {
    return row(w, withCounts(x), size(x.bytesA), size(x.bytesB),
               formatSizeDifference(x.difference()));
  });
}

/// "alloc 750 KiB", "free 4 B"; "-" for no event.
std::string shortEvent(const AllocationSequence& s, int64_t x) {
  if (x < 0) return "-";
  const SequenceEvent& e = s.events[size_t(x)];
  return std::string(e.alloc ? "alloc " : "free ") + formatSize(e.bytes);
}

/// "A: 59 events, after ...; at the start: requests 0 B, reserved 0 B".
std::string sideLine(const char* side, const AllocationSequence& s) {
  std::string text = std::string("  ") + side + ": " + std::to_string(s.events.size()) +
                     " allocs and frees, starting " + s.start + "; at the start: requests " +
                     formatSize(s.startRequested);
  if (s.hasReserved()) text += ", reserved " + formatSize(s.startReserved);
  return text + "\n";
}

/// How B - A of one total went over the matched rows.
std::string driftLine(const char* total, int64_t atStart, int64_t firstDrift,
                      const SequenceAlignment& al, const AllocationSequence& a,
                      const AllocationSequence& b, bool reserved) {
  std::string text =
      std::string("  ") + total + " B - A at the start: " + formatSizeDifference(atStart);
  if (firstDrift < 0) return text + ", the same at every matched event\n";
  const AlignedRow& r = al.rows[size_t(firstDrift)];
  const SequenceEvent& x = a.events[size_t(r.a)];
  const SequenceEvent& y = b.events[size_t(r.b)];
  const int64_t va = reserved ? x.reserved : x.requested, vb = reserved ? y.reserved : y.requested;
  return text + "; first otherwise at row " + std::to_string(firstDrift) + ": A " + formatSize(va) +
         ", B " + formatSize(vb) + " (" + formatSizeDifference(vb - va) + ")\n";
}

void writeSequenceRow(std::ostream& os, const ComparedSequence& c, size_t k) {
  const AlignedRow& r = c.alignment.rows[k];
  auto total = [](const AllocationSequence& s, int64_t x, bool reserved) {
    if (x < 0) return std::string("-");
    const SequenceEvent& e = s.events[size_t(x)];
    return reserved ? (e.reserved < 0 ? std::string("-") : formatSize(e.reserved))
                    : formatSize(e.requested);
  };
  const AllocationSequence& site = r.a >= 0 ? *c.a : *c.b;
  const SequenceEvent& e = site.events[size_t(r.a >= 0 ? r.a : r.b)];
  const SequenceSite& where = site.sites[size_t(e.site)];
  char line[512];
  std::snprintf(line, sizeof line, "  %5zu %-12s %-16s %-16s %10s %10s %10s %10s  %s%s%s\n", k,
                alignedKindName(r.kind), shortEvent(*c.a, r.a).c_str(),
                shortEvent(*c.b, r.b).c_str(), total(*c.a, r.a, false).c_str(),
                total(*c.b, r.b, false).c_str(), total(*c.a, r.a, true).c_str(),
                total(*c.b, r.b, true).c_str(), where.op.c_str(), where.where.empty() ? "" : " at ",
                where.where.c_str());
  os << line;
}

void writeSequence(std::ostream& os, const ComparedSequence& c, size_t maxRows) {
  const SequenceAlignment& al = c.alignment;
  os << "\nevents: " << c.name << " (allocs and frees aligned by kind, request size and order)\n";
  os << sideLine("A", *c.a) << sideLine("B", *c.b);
  os << "  " << describeDivergence(al, *c.a, *c.b) << "\n";
  os << driftLine("live requests:", c.b->startRequested - c.a->startRequested,
                  al.firstRequestedDrift, al, *c.a, *c.b, false);
  if (al.bothReserved)
    os << driftLine("reserved:", c.b->startReserved - c.a->startReserved, al.firstReservedDrift, al,
                    *c.a, *c.b, true);
  // The rows from a few before the first divergence (from the first without one).
  const size_t n = al.rows.size();
  const size_t from = al.diverges() ? size_t(std::max<int64_t>(0, al.firstDivergence - 3)) : 0;
  const size_t to = maxRows ? std::min(n, from + maxRows) : n;
  char head[256];
  std::snprintf(head, sizeof head, "  %5s %-12s %-16s %-16s %10s %10s %10s %10s  %s\n", "row", "",
                "A", "B", "requests A", "B", "reserved A", "B", "allocated by (A, else B)");
  os << head;
  if (from > 0) os << "  ... " << from << " rows before\n";
  for (size_t k = from; k < to; ++k) writeSequenceRow(os, c, k);
  if (to < n) os << "  ... and " << n - to << " more rows (--rows 0: all)\n";
}

}  // namespace

std::string formatSizeDifference(int64_t bytes) {
  return (bytes > 0 ? "+" : "") + formatSize(bytes);
}

std::string formatSecondsDifference(double seconds) {
  if (!std::isfinite(seconds)) return "-";
  if (seconds < 0) return "-" + formatSeconds(-seconds);
  return (seconds > 0 ? "+" : "") + formatSeconds(seconds);
}

void writeCompareText(std::ostream& os, const ReportComparison& c, size_t maxRows) {
  os << "A: " << c.fileA << "\nB: " << c.fileB << "\n";
  if (c.hasStrategies) {
    if (c.strategies.setupDifferences.empty())
      os << "run alike (same workload, device and requires_grad)\n";
    for (const std::string& s : c.strategies.setupDifferences) os << s << "\n";
    writeStrategies(os, c.strategies);
  }
  for (const ComparedSequence& q : c.sequences) writeSequence(os, q, maxRows);
  for (const ComparedTimeline& t : c.timelines) writeTimeline(os, t, maxRows);
  if (!c.notes.empty()) os << "\n";
  for (const std::string& n : c.notes) os << "note: " << n << "\n";
}

}  // namespace matmulviz
