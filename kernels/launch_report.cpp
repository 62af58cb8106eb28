#include "kernels/launch_report.h"

#include <cmath>
#include <ostream>

#include "core/util/format_units.h"

namespace matmulviz::kernels {
namespace {

nlohmann::ordered_json dim3(const sim::Dim3& d) {
  return nlohmann::ordered_json::array({d.x, d.y, d.z});
}

nlohmann::ordered_json finiteOrNull(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}

double intensity(const sim::LaunchStats& s) {
  const double bytes = static_cast<double>(s.globalLoadBytes + s.globalStoreBytes);
  return bytes > 0 ? 2.0 * static_cast<double>(s.fmas) / bytes : 0.0;
}

}  // namespace

costmodel::WorkCounts launchCounts(const sim::LaunchStats& stats) {
  return costmodel::WorkCounts{1, stats.globalLoadBytes, stats.globalStoreBytes, 2 * stats.fmas};
}

nlohmann::ordered_json modelJson(const costmodel::WorkCounts& counts,
                                 const costmodel::Prediction& p, const costmodel::GpuProfile& gpu,
                                 const std::string& note) {
  return {{"gpu", gpu.name},
          {"launches", counts.launches},
          {"bytes_read", counts.bytesRead},
          {"bytes_written", counts.bytesWritten},
          {"flops", counts.flops},
          {"on_chip_bytes", counts.onChipBytes},
          {"memory_s", p.memoryS},
          {"on_chip_s", p.onChipS},
          {"compute_s", p.computeS},
          {"launch_s", p.launchS},
          {"predicted_s", p.totalS},
          {"bound", std::string(p.bound)},
          {"explanation", p.explanation},
          {"note", note}};
}

costmodel::KernelShape kernelShape(const KernelVariant& variant, const MatmulProblem& problem,
                                   int tpb) {
  return {std::string(variant.name),
          problem.M,
          problem.K,
          problem.N,
          tpb,
          variant.gathered ? problem.batch : 1,
          variant.gathered ? problem.table : 1};
}

nlohmann::ordered_json launchModelJson(const KernelVariant& variant, const MatmulProblem& problem,
                                       int tpb, const costmodel::GpuProfile& gpu,
                                       const sim::LaunchStats* simulated) {
  const costmodel::KernelShape shape = kernelShape(variant, problem, tpb);
  if (costmodel::hasKernelModel(shape.kernel)) {
    return modelJson(costmodel::kernelCounts(shape), costmodel::predictKernel(shape, gpu), gpu,
                     "a model, not a measurement: max(device-memory bytes / bandwidth, 128-byte "
                     "lines through L1/shared / on-chip bandwidth, flops / peak) + launch "
                     "latency, from the kernel's access pattern");
  }
  if (simulated == nullptr) return nullptr;
  const costmodel::WorkCounts counts = launchCounts(*simulated);
  return modelJson(counts, costmodel::predict(counts, gpu), gpu,
                   "a model, not a measurement: max(bytes / bandwidth, flops / peak) + launches x "
                   "launch latency, every simulated load counted, no caches");
}

nlohmann::ordered_json launchJson(const KernelVariant& variant, const MatmulProblem& problem,
                                  int tpb, const SimulatedRun& run,
                                  const costmodel::GpuProfile* gpu) {
  const sim::LaunchReport& r = run.report;
  const sim::LaunchStats& s = r.stats;
  nlohmann::ordered_json sizes = {{"m", problem.M}, {"k", problem.K}, {"n", problem.N}};
  if (variant.gathered) {
    sizes["batch"] = problem.batch;
    sizes["table"] = problem.table;
  }
  nlohmann::ordered_json diagnostics = nlohmann::ordered_json::array();
  for (const sim::Diagnostic& d : r.diagnostics) {
    diagnostics.push_back({{"kind", sim::toString(d.kind)},
                           {"kernel", d.kernel},
                           {"block", dim3(d.block)},
                           {"thread", dim3(d.thread)},
                           {"array", d.array.empty() ? nlohmann::ordered_json(nullptr)
                                                     : nlohmann::ordered_json(d.array)},
                           {"index", d.index},
                           {"message", d.message},
                           {"repeats", d.repeats}});
  }
  nlohmann::ordered_json priors = nlohmann::ordered_json::array();
  for (const sim::PriorLaunch& l : r.priorLaunches) {
    priors.push_back({{"kernel", l.kernel},
                      {"grid", dim3(l.config.gridDim)},
                      {"block", dim3(l.config.blockDim)},
                      {"shared_bytes", l.config.sharedBytes},
                      {"threads", l.stats.threads},
                      {"global_loads", l.stats.globalLoads},
                      {"global_stores", l.stats.globalStores},
                      {"bytes_read", l.stats.globalLoadBytes},
                      {"bytes_written", l.stats.globalStoreBytes},
                      {"shared_loads", l.stats.sharedLoads},
                      {"shared_stores", l.stats.sharedStores},
                      {"barriers", l.stats.barriers},
                      {"time_s", l.stats.elapsedS}});
  }
  nlohmann::ordered_json trace = nullptr;
  if (r.traced) {
    trace = {{"events_recorded", r.trace.events().size()},
             {"events_dropped", r.trace.dropped()},
             {"cap_bytes", r.trace.capBytes()},
             {"traced_blocks", r.tracedBlocks.empty() ? nlohmann::ordered_json("all")
                                                      : nlohmann::ordered_json(r.tracedBlocks)}};
  }
  return {{"kernel", std::string(variant.name)},
          {"device", "cpu"},
          {"sizes", sizes},
          {"tpb", tpb},
          {"grid", dim3(r.config.gridDim)},
          {"block", dim3(r.config.blockDim)},
          {"shared_bytes", r.config.sharedBytes},
          {"threads", s.threads},
          {"active_threads", s.activeThreads},
          {"idle_threads", s.threads - s.activeThreads - s.outOfBoundsOnlyThreads},
          {"out_of_bounds_only_threads", s.outOfBoundsOnlyThreads},
          {"global_loads", s.globalLoads},
          {"global_stores", s.globalStores},
          {"bytes_read", s.globalLoadBytes},
          {"bytes_written", s.globalStoreBytes},
          {"shared_loads", s.sharedLoads},
          {"shared_stores", s.sharedStores},
          {"fmas", s.fmas},
          {"flops", 2 * s.fmas},
          {"arithmetic_intensity", intensity(s)},
          {"barriers", s.barriers},
          {"max_rel_err", finiteOrNull(run.maxRelErr)},
          {"accuracy_failed", !std::isfinite(run.maxRelErr)},
          {"time_s", s.elapsedS},
          {"sim_threads_per_s", s.threadsPerS()},
          {"diagnostic_counts",
           {{"out_of_bounds", r.diagnosticCounts.outOfBounds},
            {"barrier_divergence", r.diagnosticCounts.barrierDivergence},
            {"shared_race", r.diagnosticCounts.sharedRaces}}},
          {"diagnostics", diagnostics},
          {"prior_launches", priors},
          {"trace", trace},
          {"model", gpu != nullptr ? launchModelJson(variant, problem, tpb, *gpu, &s)
                                   : nlohmann::ordered_json(nullptr)}};
}

void writeLaunchText(std::ostream& out, const KernelVariant& variant, const MatmulProblem& problem,
                     int tpb, const SimulatedRun& run) {
  const sim::LaunchReport& r = run.report;
  const sim::LaunchStats& s = r.stats;
  out << "kernel " << variant.name << " (" << variant.file << "): " << variant.summary << "\n";
  out << "  sizes M=" << problem.M << " K=" << problem.K << " N=" << problem.N;
  if (variant.gathered) out << " batch=" << problem.batch << " table=" << problem.table;
  out << ", TPB=" << tpb << "\n";
  for (const sim::PriorLaunch& l : r.priorLaunches) {
    out << "  before it, " << l.kernel << ": grid " << sim::toString(l.config.gridDim) << ", block "
        << sim::toString(l.config.blockDim) << ", global loads " << l.stats.globalLoads
        << ", stores " << l.stats.globalStores << ", barriers " << l.stats.barriers << "\n";
  }
  if (!r.priorLaunches.empty()) out << "  then the product (the rest of this report):\n";
  out << "  grid " << sim::toString(r.config.gridDim) << ", block "
      << sim::toString(r.config.blockDim) << ", shared memory " << r.config.sharedBytes
      << " bytes per block\n";
  out << "  threads " << s.threads << ": " << s.activeThreads << " active, "
      << s.threads - s.activeThreads - s.outOfBoundsOnlyThreads << " idle (no global access)";
  if (s.outOfBoundsOnlyThreads > 0)
    out << ", " << s.outOfBoundsOnlyThreads
        << " whose every global access is out of bounds (reported below)";
  out << "\n";
  out << "  global loads " << s.globalLoads << " (" << s.globalLoadBytes << " bytes), stores "
      << s.globalStores << " (" << s.globalStoreBytes << " bytes); shared loads " << s.sharedLoads
      << ", stores " << s.sharedStores << "; barriers " << s.barriers << "\n";
  out << "  FMAs " << s.fmas << ", arithmetic intensity " << intensity(s)
      << " FLOP per byte of global memory\n";
  out << "  max_rel_err vs BLAS (float64) " << run.maxRelErr;
  if (!std::isfinite(run.maxRelErr)) out << ": C holds NaN or Inf, so the accuracy check fails";
  out << "\n";
  out << "  simulated in " << formatSeconds(s.elapsedS) << ": "
      << formatRate(s.threadsPerS(), "threads") << "\n";
  if (r.traced) {
    out << "  trace: " << r.trace.events().size() << " events recorded, " << r.trace.dropped()
        << " dropped (cap " << formatSize(static_cast<std::int64_t>(r.trace.capBytes())) << ")\n";
  }
  out << "  diagnostics: " << r.diagnosticCounts.outOfBounds << " out-of-bounds accesses, "
      << r.diagnosticCounts.barrierDivergence << " divergent barriers, "
      << r.diagnosticCounts.sharedRaces << " shared-memory races\n";
  for (const sim::Diagnostic& d : r.diagnostics) out << "    " << d.message << "\n";
  std::uint64_t listed = 0;  // occurrences the listed entries stand for
  for (const sim::Diagnostic& d : r.diagnostics) listed += d.repeats;
  if (listed < r.diagnosticCounts.total()) {
    out << "    (only the first " << r.diagnostics.size() << " shown)\n";
  }
}

}  // namespace matmulviz::kernels
