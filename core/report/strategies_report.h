#pragma once
// What a strategies run returns: per strategy, its timings, curMem/maxMem, what stayed alive
// and why, its error against float64, the backward outcome, and (when asked) the timeline.

#include "core/memory/caching_allocator.h"
#include "core/strategies/requires_grad.h"
#include "core/strategies/workload.h"
#include "core/tensor/device.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace matmulviz {

/// Blocks still allocated after the statement, grouped by label and reason.
struct KeptAlive {
  std::string label;  ///< "c[q]", "out", "a"
  int64_t bytes = 0;  ///< summed block bytes (what memory_allocated counts)
  int64_t count = 0;  ///< how many blocks
  std::string why;    ///< "saved as mat2 of BmmBackward0 because a requires grad"

  /// Whether `why` names the block and its size already ("cuBLAS workspace of the main thread,
  /// 32 MiB, kept for the life of the process"), so that it is the whole line.
  bool whyNamesTheBlock() const { return count == 1 && why.starts_with(label + ", "); }
};

/// Seconds. cold is the first run (it may pay for fresh pages); median/min/max are over the
/// warm runs (all runs when there is only one).
struct TimeStats {
  double cold = 0, median = 0, min = 0, max = 0;
};

struct BackwardOutcome {
  enum class Status { NotRequested, Ran, Skipped, Failed };
  /// Why it was skipped or failed, as data. The engine states the fact in `message`; each
  /// front end appends what its user can do, in its own words (a flag on the CLI, a field of
  /// the app's panel).
  enum class Reason {
    None,                 ///< it ran, or was not requested
    NothingRequiresGrad,  ///< skipped: neither a nor c requires grad
    OverTimeLimit,        ///< skipped: estimateSeconds over RunConfig::backwardLimitSeconds
    OutOfMemory,          ///< failed: the device ran out of memory during it
  };
  Status status = Status::NotRequested;
  Reason reason = Reason::None;
  /// Why skipped or failed, without a remedy: "nothing requires grad", "backward would take
  /// about 95 s here (its ops allocate ...)", the out-of-memory message.
  std::string message;
  double estimateSeconds = 0;  ///< model: bytes the backward writes and reads / bandwidth
  int64_t estimateBytes = 0;   ///< bytes allocated by the backward (meta dry run)
  double timeSeconds = 0;
  int64_t maxMemBytes = 0;  ///< peak allocated during backward (from forward's end)
  int64_t curMemBytes = 0;  ///< allocated after backward (grads included)
  double maxRelErrDA = std::numeric_limits<double>::quiet_NaN();
  double maxRelErrDC = std::numeric_limits<double>::quiet_NaN();
  /// FLOPs of the backward as PyTorch's FlopCounterMode counts them (core/ops/flop_counter.h;
  /// one multiply-add = 2), when it ran.
  int64_t flops = 0;
  Tensor dA, dC;  ///< host copies when the device has data and a/c require grad
};

/// Everything the allocator saw during the measured run (only with RunConfig::recordTimeline).
struct MemoryTimeline {
  std::vector<MemoryEvent> events;
  std::vector<AllocationRecord> records;  ///< by id
  std::vector<std::string> opNames;
  std::vector<CachingAllocator::OpSpan> spans;
  /// For records still alive at the end of the statement: why ("saved as ...").
  std::unordered_map<int64_t, std::string> aliveWhy;
  double statementEndUs = 0;
};

struct StrategyRun {
  std::string strategy;
  RequiresGrad requiresGrad;  ///< which of a, c required grad in this run
  bool ok = true;
  std::string error;  ///< e.g. the out-of-memory message
  TimeStats time;
  MemoryCounters current;  ///< after `out = strategy(...)`, out held
  MemoryCounters peak;     ///< since the inputs were made
  Shape outputShape;
  double maxRelErr = std::numeric_limits<double>::quiet_NaN();  ///< NaN: not computed (meta)
  /// FLOPs of one forward (`out = strategy(...)`) as PyTorch's FlopCounterMode counts them
  /// (core/ops/flop_counter.h; one multiply-add = 2).
  int64_t forwardFlops = 0;
  std::vector<KeptAlive> keptAlive;
  /// The accuracy check failed: out, dA or dC, or its float64 reference, holds NaN or Inf, so
  /// its max_rel_err is NaN or Inf. One line per tensor, naming it; empty when the check passed
  /// or did not run (meta).
  std::vector<std::string> accuracyWarnings;
  BackwardOutcome backward;
  MemoryTimeline timeline;
  Tensor out;  ///< host copy when RunConfig::keepOutputs and the device has data
};

struct StrategiesReport {
  Workload workload;
  DeviceKind device = DeviceKind::Cpu;
  /// The PyTorch and GPU the allocator model followed, with the CUBLAS_WORKSPACE_CONFIG in
  /// effect; none in a report written before it was recorded.
  std::optional<PyTorchModel> pytorch;
  std::vector<StrategyRun> runs;
  std::vector<std::string> notes;  ///< said once, e.g. strategy3's tail
  Tensor gradOutput;               ///< the grad_output used (host), when --backward
  bool anyFailed() const;          ///< a run or a backward failed (out of memory)
  bool anyAccuracyFailed() const;  ///< a run's accuracyWarnings are not empty
};

/// bytes // 2^20 // ... as the seed prints: floor division by 1024 twice.
inline int64_t toMiBFloor(int64_t bytes) {
  return bytes / 1024 / 1024;
}

}  // namespace matmulviz
