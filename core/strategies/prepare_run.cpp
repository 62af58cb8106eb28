#include "core/strategies/prepare_run.h"

#include "core/memory/caching_allocator.h"
#include "core/memory/host_backing.h"
#include "core/util/format_units.h"

#include <algorithm>
#include <string>

namespace matmulviz {

namespace {

/// The loop strategies keep every row's result alive until the statement ends.
constexpr int64_t kBookkeepingBytesPerRow = 2560;

bool runsLoopStrategy(const RunConfig& c) {
  return std::any_of(c.strategies.begin(), c.strategies.end(),
                     [](const std::string& s) { return s == "strategy1" || s == "strategy2"; });
}

void checkSizes(const Workload& w) {
  w.validate();  // each size at least 1; products that would overflow 64-bit indexing
}

void checkStrategies(const std::vector<std::string>& names) {
  if (names.empty())
    throw BadInput("strategies", "", "strategy1, strategy2, strategy3, direct, fused",
                   "give at least one strategy");
  for (const std::string& name : names) {
    try {
      findStrategy(name);
    } catch (const std::invalid_argument& e) {
      throw BadInput("strategies", name, "strategy1, strategy2, strategy3, direct, fused",
                     e.what());
    }
  }
}

/// Throws BadInput "host memory" when the run's host data would not fit.
void checkHostMemory(const RunConfig& c) {
  const int64_t need = hostInputBytes(c);
  const int64_t available = availableHostMemoryBytes();
  const auto limit = static_cast<int64_t>(kHostMemoryShare * static_cast<double>(available));
  if (need <= limit) return;
  const std::string amounts = "would take " + formatSize(need) + " but only " +
                              formatSize(available) + " are available (the limit is 85% of that, " +
                              formatSize(limit) + ")";
  const Workload& w = c.workload;
  std::string reason;
  if (c.device == DeviceKind::Meta) {
    reason = "workload too large for this machine even on the meta device: the host index q [" +
             std::to_string(w.n) + "] (int64, 8 bytes a row)" +
             (runsLoopStrategy(c) ? " and the loop strategies' per-row bookkeeping (about "
                                    "2.5 KiB a row)"
                                  : "") +
             " " + amounts + "; use a smaller N (the rows of a and q)";
  } else {
    reason =
        "workload too large for this machine: its inputs and float64 references" +
        std::string(runsLoopStrategy(c) ? " (and the loop strategies' per-row bookkeeping)" : "") +
        " " + amounts + "; run it on the meta device (memory only) or with smaller sizes";
  }
  throw BadInput("host memory", formatSize(need), "at most " + formatSize(limit), reason);
}

}  // namespace

int64_t hostInputBytes(const RunConfig& c) {
  const Workload& w = c.workload;
  const int64_t bookkeeping = runsLoopStrategy(c) ? kBookkeepingBytesPerRow * w.n : 0;
  const int64_t q = 8 * w.n;
  if (c.device == DeviceKind::Meta) return q + bookkeeping;
  int64_t bytes = w.aBytes() + w.cBytes() + q + bookkeeping;
  bytes += 8 * w.n * w.i * w.k;  // reference out
  if (c.backward)                // reference dA and dC, and grad_output (at most float64)
    bytes += 8 * (w.n * w.i * w.j + w.m * w.j * w.k + w.n * w.i * w.k);
  return bytes;
}

void checkDTypeOnDevice(DType dtype, DeviceKind device) {
  const std::string name(dtypeName(dtype));
  if (device == DeviceKind::Cuda && dtype != DType::Float32)
    throw BadInput("dtype", name, "float32",
                   "the engine computes on a CUDA device in float32 only for now, not " + name +
                       "; use the cpu device for 16-bit dtypes");
  if (dtype != DType::Float32 && dtype != DType::Float16 && dtype != DType::BFloat16)
    throw BadInput("dtype", name, "float32, float16, bfloat16",
                   "'" + name + "' is not allowed (allowed: float32, float16, bfloat16)");
}

void preflight(const RunConfig& c) {
  checkSizes(c.workload);
  if (c.repeats < 1)
    throw BadInput("repeats", std::to_string(c.repeats), "1 or more",
                   "must be at least 1, got " + std::to_string(c.repeats));
  checkStrategies(c.strategies);
  checkDTypeOnDevice(c.workload.dtype, c.device);
  if (c.deviceMemoryBytes && *c.deviceMemoryBytes <= 0)
    throw BadInput("device memory", std::to_string(*c.deviceMemoryBytes), "more than 0 bytes",
                   "must be more than 0 bytes, e.g. 1GiB");
  if (c.checkHostMemory) checkHostMemory(c);
}

PreparedRun prepareRun(RunConfig config) {
  return prepareRun(std::move(config), [](const RunConfig& c) {
    return makeRandomInputs(c.workload, c.seed, c.device != DeviceKind::Meta);
  });
}

PreparedRun prepareRun(RunConfig config, const std::function<Inputs(const RunConfig&)>& inputs) {
  preflight(config);
  PreparedRun run;
  run.inputs = inputs(config);
  checkInputs(config.workload, run.inputs);
  run.config = std::move(config);
  return run;
}

}  // namespace matmulviz
