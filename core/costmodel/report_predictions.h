#pragma once
// The cost model applied to a strategies report: one prediction per run, and the "predicted"
// object each run of the JSON report carries. The one place the CLI's `strategies` and `export`
// and the app's run history get their predictions from.

#include "core/costmodel/cost_model.h"
#include "core/report/strategies_report.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string_view>

namespace matmulviz::costmodel {

/// A run's forward device counts (strategyCounts) and the model's prediction of its time, host
/// included (predictStrategy).
struct RunPrediction {
  WorkCounts counts;
  Prediction prediction;
};

/// The counts and prediction of `strategy` on the report's workload (its sizes and its dtype's
/// element size) and `gpu`; std::nullopt for a strategy the model does not know.
std::optional<RunPrediction> predictRun(const Workload& workload, std::string_view strategy,
                                        const GpuProfile& gpu);

/// Adds to each run of `j` (toJson(report), runs in the report's order) a "predicted" object:
/// {"model", "time_s", "bound", "host_s", "explanation", "launches", "bytes_read",
/// "bytes_written", "flops"}; runs the
/// model does not know get none.
void addPredictions(nlohmann::ordered_json& j, const StrategiesReport& report,
                    const GpuProfile& gpu);

}  // namespace matmulviz::costmodel
