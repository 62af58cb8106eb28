#pragma once
// Runs strategies on a workload, each isolated (a fresh caching-allocator model with only the
// inputs in it, as the seed's table was taken), and reports memory, time and errors.

#include "core/report/strategies_report.h"
#include "core/strategies/requires_grad.h"
#include "core/strategies/strategy.h"

#include <atomic>
#include <functional>
#include <map>
#include <optional>

namespace matmulviz {

struct RunConfig {
  Workload workload;
  std::vector<std::string> strategies{"strategy1", "strategy2", "strategy3", "direct", "fused"};
  RequiresGrad requiresGrad;  ///< which of a, c require grad
  int repeats = 3;
  uint64_t seed = 0;
  DeviceKind device = DeviceKind::Cpu;
  std::optional<int64_t> deviceMemoryBytes;  ///< capacity of the simulated device
  /// Which PyTorch on which GPU the allocator model follows (core/memory/pytorch_model.h):
  /// PyTorch 2.x on an H200 unless a caller (the seed000 presets: the forum post's) says so.
  PyTorchModel pytorch = defaultPyTorchModel();
  bool backward = false;
  bool force = false;                ///< run backward even when estimated over the limit
  double backwardLimitSeconds = 60;  ///< estimates above this are skipped unless force
  /// Memory bandwidth of the run's device (bytes read + written per second) for the backward
  /// estimate: on cuda the GPU profile's (kernels/cuda/cuda_device.h useCudaDeviceIfAsked);
  /// unset, this machine's host copy bandwidth, measured (hostBandwidthBytesPerSecond).
  std::optional<double> deviceBandwidthBytesPerS;
  bool recordTimeline = false;
  bool keepOutputs = false;     ///< host copies of out, dA, dC (for --save-dir)
  bool checkHostMemory = true;  ///< refuse workloads that would not fit in RAM
  /// Makes the device of each run when `device` is one the engine cannot make itself (cuda:
  /// kernels/cuda/cuda_device.h makeCudaDevice; tests pass a simulated device). The runner
  /// synchronizes the device's ComputeBackend before reading its timers.
  DeviceFactory deviceFactory;
};

/// Where a run is, as data: the runner reports one before each step. A front end words it
/// (describe() for the CLI) or computes its own measure from the fields (the app's progress
/// bar); nothing parses the text.
struct RunProgress {
  enum class Phase {
    CheckingMemory,      ///< checkFitsInHostMemory: the meta dry run of `strategy`
    EstimatingBackward,  ///< the backward estimate of `strategy` (a device with data, backward)
    Reference,           ///< the float64 reference of out (and of dA, dC); no strategy
    Forward,             ///< repeat `repeat` of `repeatCount` of `strategy`'s statement
    Backward,            ///< `strategy`'s backward, after its last repeat
    Finished,            ///< every strategy ran (not reported when cancelled); no strategy
  };
  Phase phase = Phase::Forward;
  std::string strategy;   ///< the strategy's name; empty for Reference and Finished
  int strategyIndex = 0;  ///< 0-based position of `strategy` in RunConfig::strategies
  int strategyCount = 0;  ///< RunConfig::strategies.size()
  int repeat = 0;         ///< 1-based repeat for Forward (repeatCount for Backward), else 0
  int repeatCount = 0;    ///< RunConfig::repeats
};

/// The CLI's line for `p` (without its "[matmulviz] " prefix): "strategy2: run 1 of 3",
/// "estimating the backward of strategy2", "computing the float64 reference", ...; "finished"
/// for Finished.
std::string describe(const RunProgress& p);

using ProgressFn = std::function<void(const RunProgress&)>;

class StrategyRunner {
 public:
  /// `inputs` must match config.workload (checkInputs); a and c may be undefined on meta.
  /// `gradOutput` (host, [N, I, K]) is used for backward; random normal (seeded) when undefined.
  /// Throws BadInput for repeats < 1 (field "repeats") or a gradOutput of another shape
  /// ("grad output"), std::invalid_argument for an unknown strategy or a bad workload.
  StrategyRunner(RunConfig config, Inputs inputs, Tensor gradOutput = {});

  /// Estimates, per strategy, the peak host memory a cpu run needs (a meta dry run) and
  /// throws BadInput (field "host memory") when it exceeds what this machine has available.
  /// `progress` hears CheckingMemory before each strategy's dry run.
  void checkFitsInHostMemory(const ProgressFn& progress = {});

  /// Runs every configured strategy. A strategy that fails (out of memory) is reported with
  /// ok = false and the others still run. `cancel`, when set, stops between runs. `progress`
  /// hears, in order: EstimatingBackward per strategy (with backward and data), Reference (devices
  /// with data), then per strategy Forward 1..repeats and Backward (when it runs), and
  /// Finished unless cancelled.
  StrategiesReport run(const ProgressFn& progress = {}, const std::atomic<bool>* cancel = nullptr);

 private:
  struct DryRun {
    int64_t peakReservedBytes = 0;
    int64_t backwardBytes = 0;
  };
  /// The strategy (and, with backward, its backward) on a meta device: peak reserved bytes and
  /// the bytes the backward allocates. Computed once per strategy and kept.
  const DryRun& dryRun(const StrategyInfo& s);
  /// The backward's bytes (a meta dry run) and the time they would take on the run's device
  /// (RunConfig::deviceBandwidthBytesPerS, else the host's measured bandwidth).
  BackwardOutcome estimateBackward(const StrategyInfo& s);
  /// The bandwidth the estimate uses, bytes per second.
  double estimateBandwidth() const;
  StrategyRun runOne(const StrategyInfo& s, int index, const BackwardOutcome& estimate,
                     const ProgressFn& progress);
  /// A RunProgress of `phase` for the strategy at `index` (-1: none).
  RunProgress progressOf(RunProgress::Phase phase, int index, int repeat = 0) const;

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
