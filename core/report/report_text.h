#pragma once
// The strategies report as the table a person reads in a terminal: the seed's numbers
// (curMem/maxMem in MiB floor-divided as the seed prints them), then what stayed alive and why.

#include "core/report/strategies_report.h"

#include <ostream>

namespace matmulviz {

void writeTextReport(std::ostream& os, const StrategiesReport& report);

}  // namespace matmulviz
