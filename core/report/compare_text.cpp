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
std::string peak(const TimelinePeak& p) {
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
     << " in B; the whole timeline, backward included when it ran; @N: the event)\n";
  os << row(w, "", "A", "B", "B-A");
  os << row(w, "peak allocated", peak(d.allocatedA), peak(d.allocatedB),
            formatSizeDifference(d.allocatedB.bytes - d.allocatedA.bytes));
  os << row(w, "peak reserved", peak(d.reservedA), peak(d.reservedB),
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
  for (const ComparedTimeline& t : c.timelines) writeTimeline(os, t, maxRows);
  if (!c.notes.empty()) os << "\n";
  for (const std::string& n : c.notes) os << "note: " << n << "\n";
}

}  // namespace matmulviz
