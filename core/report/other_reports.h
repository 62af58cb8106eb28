#pragma once
// The report kinds that hold no memory timeline, as the app opens them: "multihead"
// (matmulviz-cli multihead --json), "budget" (matmulviz-cli budget --json) and "einsum"
// (matmulviz-cli einsum --json). The app reruns a multi-head workload here and traces a budget
// report's script again (each report says what ran, not every tensor); an einsum report is
// summarised. Qt-free. Each reader checks the envelope's kind and throws ReportLoadError
// ("'<file>': <key path> <problem>") for a missing or mistyped key or a value out of range.
#include "core/multihead/multihead_report.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace matmulviz {

/// A "multihead" report: the workload it ran (workload.*, the seed included, so that a rerun
/// here draws the same inputs) and what it measured on its machine.
struct MultiheadReportFile {
  MultiheadConfig config;                          ///< validated (MultiheadConfig::validate)
  std::string device;                              ///< "cpu", "meta", "cuda"
  int64_t t = 0;                                   ///< important tokens
  double timeS = 0;                                ///< seconds
  int64_t maxMemBytes = 0, reservedPeakBytes = 0;  ///< memory.max_mem_bytes, reserved_peak_bytes
};
MultiheadReportFile readMultiheadReport(const nlohmann::json& doc, const std::string& file);

/// A "budget" report: the script and function traced, and the budgets swept (each in [0, 1]).
struct BudgetReportFile {
  std::string script, function, solver;
  std::vector<double> budgets;
  int64_t eagerActivationBytes = 0;  ///< eager.activation_bytes: what eager mode saves
};
BudgetReportFile readBudgetReport(const nlohmann::json& doc, const std::string& file);

/// An "einsum" report: the equation, the operands' and output's shapes and what it measured.
struct EinsumReportFile {
  std::string equation, dtype, device;
  std::vector<std::vector<int64_t>> operandShapes;
  std::vector<int64_t> outputShape;
  double timeS = 0;
  int64_t maxMemBytes = 0;
};
EinsumReportFile readEinsumReport(const nlohmann::json& doc, const std::string& file);

/// "einsum('bij,bjk->bik') of [2,3,4], [2,4,5] -> [2,3,5], float32 on cpu: 12 us, maxMem 512 B".
std::string einsumSummary(const EinsumReportFile& r);

}  // namespace matmulviz
