#pragma once
// The command line's words for a value the engine refuses (core/util/bad_input.h): the field
// becomes the flag that sets it, so "dtype: ..." reads "--dtype: ...". And its remedies for a
// backward the engine skipped (BackwardOutcome::Reason): the flag that changes it.

#include "core/util/bad_input.h"

#include <string>

namespace matmulviz {
struct StrategiesReport;
}  // namespace matmulviz

namespace matmulviz::cli {

/// "--dtype: <reason>" for a field a flag sets; the reason alone for one no flag sets (the
/// host memory a workload needs).
std::string cliMessage(const BadInput& e);

/// Appends the CLI's remedy to each skipped backward's message in `report`: "nothing requires
/// grad: use --requires-grad a, c or a,c", "backward would take about 95 s here (...); rerun
/// with --force to run it". Call once, before the report is printed or written.
void addCliRemedies(StrategiesReport& report);

}  // namespace matmulviz::cli
