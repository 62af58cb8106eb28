#pragma once
// The strategies report as JSON, in the schema of the README's command-line contract, after the
// envelope every report carries (docs/report-format.md: "format": "matmulviz-report",
// "version": 1, "kind": "strategies"):
// {"workload": {...}, "device": "cpu", "runs": [{"strategy", "requires_grad", "ok", "error",
//   "time_s": {"cold", "median", "min", "max"}, "cur_mem_bytes", "max_mem_bytes", "cur_mem_mib",
//   "max_mem_mib", "output_shape", "max_rel_err", "kept_alive": [{"label", "bytes", "why"}]}]}
// plus, additively: "notes", per run "requested_peak_bytes", "reserved_peak_bytes",
// "kept_alive[].count", "backward" when --backward was given, and the accuracy check:
// "accuracy_failed" (true when out, dA or dC or its float64 reference holds NaN or Inf) and
// "warnings" (one line per such tensor, naming it). "max_rel_err" and the backward's
// "max_rel_err_da"/"max_rel_err_dc" are null when not computed (meta) or not finite (JSON has
// no NaN or Inf; "accuracy_failed" tells the two apart). With TimelineInJson::Include, a run
// that recorded its memory timeline (RunConfig::recordTimeline) carries it as "timeline"
// (core/report/timeline_json.h; about 50 bytes per event written compact, so it is asked for:
// `strategies --timeline`). core/report/report_load.h reads the report back.

#include "core/report/strategies_report.h"

#include <nlohmann/json.hpp>

namespace matmulviz {

enum class TimelineInJson { Omit, Include };

/// The "pytorch" object of a report (docs/report-format.md): version, gpu,
/// cublas_workspace_config, described.
nlohmann::ordered_json pytorchModelJson(const PyTorchModel& model);

nlohmann::ordered_json toJson(const StrategiesReport& report,
                              TimelineInJson timelines = TimelineInJson::Omit);

}  // namespace matmulviz
