#pragma once
// A comparison of two reports as the text a person reads in a terminal (`matmulviz-cli
// compare`): what differs in how they were run, the strategies' maxMem, curMem and median time
// (A, B, B - A), then for each pair of timelines the peaks and the bytes alive at the peak by
// category and by label, and each label's allocations over the run, largest difference first.

#include "core/report/compare_reports.h"

#include <cstdint>
#include <ostream>
#include <string>

namespace matmulviz {

/// A difference of sizes with its sign: "+2.06 GiB", "-96 MiB", "0 B" (formatSize).
std::string formatSizeDifference(int64_t bytes);
/// A difference of seconds with its sign: "+1.2 ms", "-350 us"; "-" when not finite.
std::string formatSecondsDifference(double seconds);

/// Writes `c`. `maxRows` limits each per-label list (0: no limit); the rest is counted.
void writeCompareText(std::ostream& os, const ReportComparison& c, size_t maxRows = 20);

}  // namespace matmulviz
