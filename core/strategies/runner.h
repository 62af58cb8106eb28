#pragma once
// Runs strategies on a workload, each isolated (a fresh caching-allocator model with only the
// inputs in it, as the seed's table was taken), and reports memory, time and errors.

#include "core/report/strategies_report.h"
#include "core/strategies/strategy.h"

#include <atomic>
#include <functional>
#include <map>
#include <optional>

namespace matmulviz {

struct RunConfig {
  Workload workload;
  std::vector<std::string> strategies{"strategy1", "strategy2", "strategy3", "direct", "fused"};
  bool requiresGradA = false;
  bool requiresGradC = false;
  int repeats = 3;
  uint64_t seed = 0;
  DeviceKind device = DeviceKind::Cpu;
  std::optional<int64_t> deviceMemoryBytes;  ///< capacity of the simulated device
  bool backward = false;
  bool force = false;                ///< run backward even when estimated over the limit
  double backwardLimitSeconds = 60;  ///< estimates above this are skipped unless force
  bool recordTimeline = false;
  bool keepOutputs = false;     ///< host copies of out, dA, dC (for --save-dir)
  bool checkHostMemory = true;  ///< refuse workloads that would not fit in RAM
  /// Makes the device of each run when `device` is one the engine cannot make itself (cuda:
  /// kernels/cuda/cuda_device.h makeCudaDevice; tests pass a simulated device). The runner
  /// synchronizes the device's ComputeBackend before reading its timers.
  DeviceFactory deviceFactory;
};

using ProgressFn = std::function<void(const std::string&)>;

class StrategyRunner {
 public:
  /// `inputs` must match config.workload (checkInputs); a and c may be undefined on meta.
  /// `gradOutput` (host, [N, I, K]) is used for backward; random normal (seeded) when undefined.
  StrategyRunner(RunConfig config, Inputs inputs, Tensor gradOutput = {});

  /// Estimates, per strategy, the peak host memory a cpu run needs (a meta dry run) and
  /// throws std::invalid_argument when it exceeds what this machine has available.
  void checkFitsInHostMemory(const ProgressFn& progress = {});

  /// Runs every configured strategy. A strategy that fails (out of memory) is reported with
  /// ok = false and the others still run. `cancel`, when set, stops between runs.
  StrategiesReport run(const ProgressFn& progress = {}, const std::atomic<bool>* cancel = nullptr);

 private:
  struct DryRun {
    int64_t peakReservedBytes = 0;
    int64_t backwardBytes = 0;
  };
  /// The strategy (and, with backward, its backward) on a meta device: peak reserved bytes and
  /// the bytes the backward allocates. Computed once per strategy and kept.
  const DryRun& dryRun(const StrategyInfo& s);
  /// The backward's bytes (a meta dry run) and the time they would take here.
  BackwardOutcome estimateBackward(const StrategyInfo& s);
  StrategyRun runOne(const StrategyInfo& s, const BackwardOutcome& estimate,
                     const ProgressFn& progress);

  RunConfig config_;
  Inputs inputs_;
  Tensor gradOutput_;
  Tensor reference_, refDA_, refDC_;
  std::map<std::string, DryRun> dryRuns_;
};

/// Measured copy bandwidth of this machine (bytes/s), warm pages, used by the backward
/// estimate. Cached after the first call.
double hostBandwidthBytesPerSecond();

}  // namespace matmulviz
