#include "core/report/report_json.h"

#include "core/report/report_envelope.h"
#include "core/report/timeline_json.h"

#include <cmath>

namespace matmulviz {

namespace {

/// JSON has no NaN or Inf: null (the run's "warnings" say why when a check failed).
nlohmann::ordered_json numberOrNull(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json();
}

nlohmann::ordered_json backwardJson(const BackwardOutcome& b) {
  using S = BackwardOutcome::Status;
  nlohmann::ordered_json j;
  switch (b.status) {
    case S::NotRequested:
      return nullptr;
    case S::Ran:
      j["status"] = "ran";
      break;
    case S::Skipped:
      j["status"] = "skipped";
      break;
    case S::Failed:
      j["status"] = "failed";
      break;
  }
  j["message"] = b.message.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(b.message);
  j["estimate_s"] = b.estimateSeconds;
  j["estimate_allocated_bytes"] = b.estimateBytes;
  if (b.status == S::Ran) {
    j["time_s"] = b.timeSeconds;
    j["max_mem_bytes"] = b.maxMemBytes;
    j["cur_mem_bytes"] = b.curMemBytes;
    j["max_mem_mib"] = toMiBFloor(b.maxMemBytes);
    j["cur_mem_mib"] = toMiBFloor(b.curMemBytes);
    j["max_rel_err_da"] = numberOrNull(b.maxRelErrDA);
    j["max_rel_err_dc"] = numberOrNull(b.maxRelErrDC);
  }
  return j;
}

}  // namespace

nlohmann::ordered_json pytorchModelJson(const PyTorchModel& m) {
  return {{"version", std::string(pytorchVersionName(m.version))},
          {"gpu", m.gpu},
          {"cublas_workspace_config", m.cublasWorkspaceConfig
                                          ? nlohmann::ordered_json(*m.cublasWorkspaceConfig)
                                          : nlohmann::ordered_json()},
          {"described", m.describe()}};
}

nlohmann::ordered_json toJson(const StrategiesReport& report, TimelineInJson timelines) {
  const Workload& w = report.workload;
  nlohmann::ordered_json j = reportEnvelope("strategies");
  j["workload"] = {{"n", w.n},
                   {"m", w.m},
                   {"i", w.i},
                   {"j", w.j},
                   {"k", w.k},
                   {"batch", w.batch},
                   {"dtype", std::string(dtypeName(w.dtype))}};
  j["device"] = std::string(deviceKindName(report.device));
  if (report.pytorch) j["pytorch"] = pytorchModelJson(*report.pytorch);
  j["notes"] = report.notes;
  j["runs"] = nlohmann::ordered_json::array();
  for (const StrategyRun& r : report.runs) {
    nlohmann::ordered_json run;
    run["strategy"] = r.strategy;
    run["requires_grad"] = r.requiresGrad.names();
    run["ok"] = r.ok;
    run["error"] = r.ok ? nlohmann::ordered_json() : nlohmann::ordered_json(r.error);
    if (r.ok)  // median, min and max are over the warm runs (all runs when there is one)
      run["time_s"] = {{"cold", r.time.cold},
                       {"median", r.time.median},
                       {"min", r.time.min},
                       {"max", r.time.max}};
    else
      run["time_s"] = nullptr;
    run["cur_mem_bytes"] = r.current.allocatedBytes;
    run["max_mem_bytes"] = r.peak.allocatedBytes;
    run["cur_mem_mib"] = toMiBFloor(r.current.allocatedBytes);
    run["max_mem_mib"] = toMiBFloor(r.peak.allocatedBytes);
    run["requested_peak_bytes"] = r.peak.requestedBytes;
    run["reserved_peak_bytes"] = r.peak.reservedBytes;
    run["output_shape"] = r.outputShape;
    run["max_rel_err"] = numberOrNull(r.maxRelErr);
    run["accuracy_failed"] = !r.accuracyWarnings.empty();
    run["warnings"] = r.accuracyWarnings;
    run["kept_alive"] = nlohmann::ordered_json::array();
    for (const KeptAlive& k : r.keptAlive)
      run["kept_alive"].push_back(
          {{"label", k.label}, {"bytes", k.bytes}, {"count", k.count}, {"why", k.why}});
    run["backward"] = backwardJson(r.backward);
    // FLOPs as PyTorch's FlopCounterMode counts them; backward only when it ran.
    run["flops"] = {{"forward", r.forwardFlops},
                    {"backward", r.backward.status == BackwardOutcome::Status::Ran
                                     ? nlohmann::ordered_json(r.backward.flops)
                                     : nlohmann::ordered_json()}};
    // The allocator's timeline, when asked for and recorded (--timeline); the app and
    // `matmulviz-cli export --report` draw the Memory view from it.
    if (timelines == TimelineInJson::Include && !r.timeline.events.empty())
      run["timeline"] = timelineToJson(r.timeline);
    j["runs"].push_back(std::move(run));
  }
  return j;
}

}  // namespace matmulviz
