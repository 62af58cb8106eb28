#include "core/costmodel/report_predictions.h"

#include <stdexcept>
#include <string>

namespace matmulviz::costmodel {

std::optional<RunPrediction> predictRun(const Workload& w, std::string_view strategy,
                                        const GpuProfile& gpu) {
  try {
    const StrategyWorkload sizes{w.n, w.m, w.i, w.j, w.k, w.batch, elementSize(w.dtype)};
    return RunPrediction{strategyCounts(strategy, sizes), predictStrategy(strategy, sizes, gpu)};
  } catch (const std::invalid_argument&) {  // a strategy the model does not know
    return std::nullopt;
  }
}

void addPredictions(nlohmann::ordered_json& j, const StrategiesReport& report,
                    const GpuProfile& gpu) {
  for (size_t x = 0; x < report.runs.size(); ++x) {
    const auto p = predictRun(report.workload, report.runs[x].strategy, gpu);
    if (!p) continue;
    j["runs"][x]["predicted"] = {{"model", std::string(gpu.name)},
                                 {"time_s", p->prediction.totalS},
                                 {"bound", std::string(p->prediction.bound)},
                                 {"host_s", p->prediction.hostS},
                                 {"explanation", p->prediction.explanation},
                                 {"launches", p->counts.launches},
                                 {"bytes_read", p->counts.bytesRead},
                                 {"bytes_written", p->counts.bytesWritten},
                                 {"flops", p->counts.flops}};
  }
}

}  // namespace matmulviz::costmodel
