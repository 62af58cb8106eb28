#pragma once
// A comparison of two reports as JSON: the report envelope with kind "compare"
// (docs/report-format.md, "Compare"), then both files' names, the strategies' A, B and B - A,
// and each timeline pair's peaks and per-label and per-category bytes. Written by
// `matmulviz-cli compare --json`.

#include "core/report/compare_reports.h"

#include <nlohmann/json.hpp>

namespace matmulviz {

/// `c` as a report of kind "compare". Bytes are integers, seconds numbers (null where not
/// measured), each difference is B - A.
nlohmann::ordered_json compareToJson(const ReportComparison& c);

}  // namespace matmulviz
