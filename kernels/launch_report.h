#pragma once
// The `launch` report as JSON (README, "More of the command line") and as a few lines of text.

#include <cstdint>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/costmodel/cost_model.h"
#include "kernels/registry.h"

namespace matmulviz::kernels {

/// {"kernel", "device": "cpu", "sizes": {"m", "k", "n"[, "batch", "table"]}, "tpb",
///  "grid": [x,y,z], "block": [x,y,z], "shared_bytes", "threads", "active_threads",
///  "idle_threads" (no global access at all), "out_of_bounds_only_threads" (every global access
///  out of bounds: neither active nor idle), "global_loads", "global_stores", "bytes_read",
///  "bytes_written", "shared_loads", "shared_stores", "fmas", "flops", "arithmetic_intensity" (FLOP
///  per byte of global memory moved), "barriers", "max_rel_err" (null when not finite),
///  "accuracy_failed" (true when max_rel_err is not finite: C holds NaN or Inf), "time_s",
///  "sim_threads_per_s", "diagnostic_counts": {"out_of_bounds", "barrier_divergence",
///  "shared_race"}, "diagnostics": [{"kind", "kernel", "block", "thread", "array", "index",
///  "message", "repeats" (occurrences the entry stands for: a barrier diverging phase after
///  phase in one block is listed once)}], "trace": null | {"events_recorded", "events_dropped",
///  "cap_bytes", "traced_blocks": "all" | [..]}} "model": null | {"gpu", "launches", "bytes_read",
///  "bytes_written", "flops", "memory_s", "compute_s", "launch_s", "predicted_s", "bound", "note"}}
///  (with `gpu`, see modelJson)
nlohmann::ordered_json launchJson(const KernelVariant& variant, const MatmulProblem& problem,
                                  int tpb, const SimulatedRun& run,
                                  const costmodel::GpuProfile* gpu = nullptr);

/// The cost model's counts for one simulated launch: 1 launch, the global bytes the threads
/// requested (every load counted, as if no cache served any), 2 FLOPs per FMA.
costmodel::WorkCounts launchCounts(const sim::LaunchStats& stats);

/// The "model" object of the reports: counts, the prediction on `gpu` and a note saying it is
/// a model.
nlohmann::ordered_json modelJson(const costmodel::WorkCounts& counts,
                                 const costmodel::GpuProfile& gpu);

/// A human-readable summary of the same report (a few lines, then the diagnostics).
void writeLaunchText(std::ostream& out, const KernelVariant& variant, const MatmulProblem& problem,
                     int tpb, const SimulatedRun& run);

}  // namespace matmulviz::kernels
