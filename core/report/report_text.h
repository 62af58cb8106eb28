#pragma once
// The strategies report as the table a person reads in a terminal: the forum post's numbers (times
// and curMem/maxMem with their units, core/util/format_units.h; "-" for a run that failed),
// warnings of failed accuracy checks, then what stayed alive and why.

#include "core/report/strategies_report.h"

#include <ostream>

namespace matmulviz {

void writeTextReport(std::ostream& os, const StrategiesReport& report);

}  // namespace matmulviz
