#pragma once
// The `launch` report as JSON (README, "More of the command line") and as a few lines of text.

#include <cstdint>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/costmodel/cost_model.h"
#include "core/costmodel/kernel_cost.h"
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
///  phase in one block is listed once)}], "prior_launches": [] or, for grouped_bmm, its
///  bucketing launches before the reported product [{"kernel", "grid", "block",
///  "shared_bytes", "threads", "global_loads", "global_stores", "bytes_read", "bytes_written",
///  "shared_loads", "shared_stores", "barriers", "time_s"}], "trace": null | {"events_recorded",
///  "events_dropped", "cap_bytes", "traced_blocks": "all" | [..]}} "model": null | {"gpu",
///  "launches", "bytes_read", "bytes_written", "flops", "on_chip_bytes", "memory_s", "on_chip_s",
///  "compute_s", "launch_s", "predicted_s", "bound", "explanation", "note"}} (with `gpu`, see
///  launchModelJson)
nlohmann::ordered_json launchJson(const KernelVariant& variant, const MatmulProblem& problem,
                                  int tpb, const SimulatedRun& run,
                                  const costmodel::GpuProfile* gpu = nullptr);

/// The cost model's counts for one simulated launch: 1 launch, the global bytes the threads
/// requested (every load counted, as if no cache served any), 2 FLOPs per FMA.
costmodel::WorkCounts launchCounts(const sim::LaunchStats& stats);

/// The "model" object of the reports: counts, the prediction on `gpu` and a note saying it is
/// a model (`note`: which counts).
nlohmann::ordered_json modelJson(const costmodel::WorkCounts& counts,
                                 const costmodel::Prediction& p, const costmodel::GpuProfile& gpu,
                                 const std::string& note);

/// The cost model's view of a launch of `variant` (its name, sizes as M, K, N, batch, table).
costmodel::KernelShape kernelShape(const KernelVariant& variant, const MatmulProblem& problem,
                                   int tpb);

/// The "model" object of a launch of `variant`: the kernel's access-pattern model
/// (core/costmodel/kernel_cost.h) when it has one; else, given `simulated`, the simulated
/// run's counts (launchCounts: every load counted, no caches); else null.
nlohmann::ordered_json launchModelJson(const KernelVariant& variant, const MatmulProblem& problem,
                                       int tpb, const costmodel::GpuProfile& gpu,
                                       const sim::LaunchStats* simulated);

/// A human-readable summary of the same report (a few lines, then the diagnostics).
void writeLaunchText(std::ostream& out, const KernelVariant& variant, const MatmulProblem& problem,
                     int tpb, const SimulatedRun& run);

}  // namespace matmulviz::kernels
