#include "core/strategies/runner.h"

#include "core/memory/cublas_workspace.h"

#include "core/autograd/grad_mode.h"
#include "core/memory/host_backing.h"
#include "core/ops/flop_counter.h"
#include "core/ops/ops.h"
#include "core/report/report_inputs.h"
#include "core/util/bad_input.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <random>
#include <stdexcept>

namespace matmulviz {

namespace {

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// The device copy of a host input, or (meta, no host data) an empty tensor of that shape;
/// its allocation labelled `label` and of `category` (inputs; gradients for grad_output).
Tensor deviceInput(const Tensor& host, const Shape& sizes, DType dtype, const DevicePtr& device,
                   const std::string& label, MemoryCategory category) {
  Tensor t;
  if (host.defined() && device->hasData()) {
    t = toDevice(host, device, label);
  } else {
    OpScope op(device.get(), "to");
    t = empty(sizes, dtype, device, label);
  }
  t.setCategory(category);
  return t;
}

std::string holdersText(const Storage& s) {
  std::string out;
  for (const auto& [why, count] : s.holders()) {
    if (!out.empty()) out += "; ";
    out += why;
    if (count > 1) out += " (by " + std::to_string(count) + " nodes)";
  }
  return out;
}

/// At the end of the statement, a live block that autograd holds (a SavedTensor on its storage)
/// and the caller does not is memory saved for backward, unless it is a gradient.
void markSavedForBackward(DeviceContext& device, const std::map<int64_t, std::string>& callerHeld) {
  CachingAllocator& alloc = device.allocator();
  for (const AllocationRecord* rec : alloc.liveRecords()) {
    if (callerHeld.count(rec->id) || rec->category == MemoryCategory::Gradients) continue;
    const Storage* s = device.storageOf(rec->id);
    if (s && !s->holders().empty()) alloc.setCategory(rec->id, MemoryCategory::SavedForBackward);
  }
}

/// Why each live block is alive: held by the caller (inputs, out) and/or saved by autograd.
std::unordered_map<int64_t, std::string> aliveReasons(
    const DeviceContext& device, const std::map<int64_t, std::string>& callerHeld) {
  std::unordered_map<int64_t, std::string> reasons;
  for (const AllocationRecord* rec : device.allocator().liveRecords()) {
    std::string why;
    if (auto it = callerHeld.find(rec->id); it != callerHeld.end()) why = it->second;
    if (const Storage* s = device.storageOf(rec->id)) {
      const std::string saved = holdersText(*s);
      if (!saved.empty()) why += (why.empty() ? "" : "; also ") + saved;
    }
    if (why.empty() && rec->category == MemoryCategory::CublasWorkspace)
      why = cublasWorkspaceDescription(
          device.allocator().cublasWorkspace(static_cast<int>(CudaThread::Autograd)) == rec->id
              ? CudaThread::Autograd
              : CudaThread::Main,
          rec->blockBytes);
    if (why.empty()) why = "referenced by a tensor outside the statement";
    reasons[rec->id] = why;
  }
  return reasons;
}

std::vector<KeptAlive> groupKeptAlive(const DeviceContext& device,
                                      const std::unordered_map<int64_t, std::string>& reasons) {
  std::map<std::pair<std::string, std::string>, KeptAlive> groups;
  for (const AllocationRecord* rec : device.allocator().liveRecords()) {
    const std::string& why = reasons.at(rec->id);
    KeptAlive& k = groups[{rec->label, why}];
    k.label = rec->label;
    k.why = why;
    k.bytes += rec->blockBytes;
    ++k.count;
  }
  std::vector<KeptAlive> out;
  for (auto& [key, k] : groups) out.push_back(std::move(k));
  std::stable_sort(out.begin(), out.end(),
                   [](const KeptAlive& x, const KeptAlive& y) { return x.bytes > y.bytes; });
  return out;
}

TimeStats summarize(std::vector<double> times) {
  TimeStats t;
  if (times.empty()) return t;
  t.cold = times.front();
  std::vector<double> warm(times.size() > 1 ? times.begin() + 1 : times.begin(), times.end());
  std::sort(warm.begin(), warm.end());
  t.min = warm.front();
  t.max = warm.back();
  const size_t mid = warm.size() / 2;
  t.median = warm.size() % 2 ? warm[mid] : 0.5 * (warm[mid - 1] + warm[mid]);
  return t;
}

MemoryTimeline captureTimeline(const CachingAllocator& alloc) {
  MemoryTimeline t;
  t.events = alloc.events();
  t.opNames = alloc.opNames();
  t.spans = alloc.opSpans();
  t.records.reserve(alloc.records().size());
  for (const auto& [id, rec] : alloc.records()) t.records.push_back(rec);
  std::sort(t.records.begin(), t.records.end(), [](auto& x, auto& y) { return x.id < y.id; });
  return t;
}

/// The accuracy check of gradient `name` (skipped when it is undefined: its input does not
/// require grad): its max_rel_err into `err`, a warning when it is not finite.
void checkGradient(const std::string& name, const Tensor& grad, const Tensor& ref, double& err,
                   std::vector<std::string>& warnings) {
  if (!grad.defined()) return;
  err = maxRelativeError(grad, ref);
  if (auto warning = nonFiniteWarning(name, grad, ref); !warning.empty())
    warnings.push_back(std::move(warning));
}

}  // namespace

std::string describe(const RunProgress& p) {
  using P = RunProgress::Phase;
  switch (p.phase) {
    case P::CheckingMemory:
      return "checking the memory " + p.strategy + " needs (meta dry run)";
    case P::EstimatingBackward:
      return "estimating the backward of " + p.strategy;
    case P::Reference:
      return "computing the float64 reference";
    case P::Forward:
      return p.strategy + ": run " + std::to_string(p.repeat) + " of " +
             std::to_string(p.repeatCount);
    case P::Backward:
      return p.strategy + ": backward";
    case P::Finished:
      return "finished";
  }
  return {};
}

bool StrategiesReport::anyFailed() const {
  for (const auto& r : runs)
    if (!r.ok || r.backward.status == BackwardOutcome::Status::Failed) return true;
  return false;
}

bool StrategiesReport::anyAccuracyFailed() const {
  for (const auto& r : runs)
    if (!r.accuracyWarnings.empty()) return true;
  return false;
}

double hostBandwidthBytesPerSecond() {
  // What a backward's zero-filled gradients cost: fill a buffer with zeros, then add another
  // into it (3 passes over the bytes). 32 MiB buffers, touched before the timing.
  static const double bandwidth = [] {
    const size_t n = size_t{8} << 20;  // floats: 32 MiB
    std::vector<float> x(n, 1.0f), y(n, 0.0f);
    double best = 0;
    for (int r = 0; r < 3; ++r) {
      const auto t0 = Clock::now();
      std::memset(y.data(), 0, n * sizeof(float));
      for (size_t i = 0; i < n; ++i) y[i] += x[i];
      const double s = secondsSince(t0);
      if (s > 0) best = std::max(best, 3.0 * static_cast<double>(n * sizeof(float)) / s);
    }
    return best > 0 ? best : 1e10;
  }();
  return bandwidth;
}

StrategyRunner::StrategyRunner(RunConfig config, Inputs inputs, Tensor gradOutput)
    : config_(std::move(config)), inputs_(std::move(inputs)), gradOutput_(std::move(gradOutput)) {
  config_.workload.validate();
  if (config_.repeats < 1)
    throw BadInput("repeats", std::to_string(config_.repeats), "at least 1", "must be at least 1");
  for (const auto& name : config_.strategies) findStrategy(name);
  checkInputs(config_.workload, inputs_);
  const Workload& w = config_.workload;
  if (config_.backward && !gradOutput_.defined() && inputs_.a.defined())
    gradOutput_ = randomNormalHost({w.n, w.i, w.k}, w.dtype, config_.seed + 1, "grad_output");
  if (gradOutput_.defined() && gradOutput_.sizes() != Shape{w.n, w.i, w.k})
    throw BadInput("grad output", gradOutput_.shapeString(), shapeToString({w.n, w.i, w.k}),
                   "expected shape " + shapeToString({w.n, w.i, w.k}) + " but got " +
                       gradOutput_.shapeString());
}

const StrategyRunner::DryRun& StrategyRunner::dryRun(const StrategyInfo& s) {
  if (auto it = dryRuns_.find(s.name); it != dryRuns_.end()) return it->second;
  const Workload& w = config_.workload;
  auto device = makeDevice(DeviceKind::Meta, {std::nullopt, false, config_.pytorch});
  Tensor a = deviceInput({}, {w.n, w.i, w.j}, w.dtype, device, "a", MemoryCategory::Inputs);
  Tensor c = deviceInput({}, {w.m, w.j, w.k}, w.dtype, device, "c", MemoryCategory::Inputs);
  a.setRequiresGrad(config_.requiresGrad.a);
  c.setRequiresGrad(config_.requiresGrad.c);
  DryRun result;
  Tensor out = s.run(a, c, inputs_.q, w.batch);
  if (config_.backward && out.requiresGrad()) {
    Tensor g =
        deviceInput({}, out.sizes(), w.dtype, device, "grad_output", MemoryCategory::Gradients);
    const int64_t before = device->allocator().cumulativeAllocatedBytes();
    out.backward(g);
    result.backwardBytes = device->allocator().cumulativeAllocatedBytes() - before;
  }
  result.peakReservedBytes = device->allocator().peak().reservedBytes;
  return dryRuns_[s.name] = result;
}

void StrategyRunner::checkFitsInHostMemory(const ProgressFn& progress) {
  if (config_.device != DeviceKind::Cpu) return;
  const int64_t available = availableHostMemoryBytes();
  for (int x = 0; x < int(config_.strategies.size()); ++x) {
    const std::string& name = config_.strategies[x];
    if (progress) progress(progressOf(RunProgress::Phase::CheckingMemory, x));
    const DryRun& d = dryRun(findStrategy(name));
    if (static_cast<double>(d.peakReservedBytes) > 0.85 * static_cast<double>(available))
      throw BadInput("host memory", formatBytes(d.peakReservedBytes),
                     "at most " + formatBytes(static_cast<int64_t>(0.85 * double(available))),
                     "workload too large for this machine: " + name + " needs " +
                         formatBytes(d.peakReservedBytes) +
                         " of device memory at its peak (held in host RAM on the cpu device) "
                         "but only " +
                         formatBytes(available) +
                         " are available; run it on the meta device to see its memory without "
                         "data, or with smaller sizes");
  }
}

StrategiesReport StrategyRunner::run(const ProgressFn& progress, const std::atomic<bool>* cancel) {
  StrategiesReport report;
  report.workload = config_.workload;
  report.device = config_.device;
  report.pytorch = config_.pytorch;
  if (!report.pytorch->cublasWorkspaceConfig)  // name the environment's, as the run used it
    report.pytorch->cublasWorkspaceConfig = effectiveCublasWorkspaceConfig(config_.pytorch);
  const Workload& w = config_.workload;
  const bool hasData = config_.device != DeviceKind::Meta;
  if (std::find(config_.strategies.begin(), config_.strategies.end(), "strategy3") !=
          config_.strategies.end() &&
      w.n % w.batch != 0)
    report.notes.push_back("strategy3: N % batch = " + std::to_string(w.n % w.batch) +
                           ": the last step multiplies the remaining rows (the seed's code drops "
                           "them)");
  // Backward estimates first: the float64 reference gradients are only worth computing when
  // some backward will run.
  std::vector<BackwardOutcome> estimates(config_.strategies.size());
  bool anyBackwardRuns = false;
  const bool anyGrad = config_.requiresGrad.any();
  // Every device with data estimates its backwards (strategy1's, with c requiring grad,
  // allocates hundreds of TiB of zero-filled gradients: hours on a GPU too); meta runs them all,
  // it only counts bytes.
  if (config_.backward && anyGrad && hasData) {
    for (size_t x = 0; x < config_.strategies.size(); ++x) {
      if (progress) progress(progressOf(RunProgress::Phase::EstimatingBackward, int(x)));
      estimates[x] = estimateBackward(findStrategy(config_.strategies[x]));
      anyBackwardRuns = anyBackwardRuns || config_.force ||
                        estimates[x].estimateSeconds <= config_.backwardLimitSeconds;
    }
  }
  if (hasData) {
    if (progress) progress(progressOf(RunProgress::Phase::Reference, -1));
    reference_ = referenceOutput(inputs_);
    if (anyBackwardRuns) referenceGradients(inputs_, gradOutput_, refDA_, refDC_);
    report.gradOutput = gradOutput_;
  }
  for (size_t x = 0; x < config_.strategies.size(); ++x) {
    if (cancel && cancel->load()) {
      report.notes.push_back("cancelled before " + config_.strategies[x]);
      break;
    }
    report.runs.push_back(
        runOne(findStrategy(config_.strategies[x]), int(x), estimates[x], progress));
    if (x + 1 == config_.strategies.size() && progress)
      progress(progressOf(RunProgress::Phase::Finished, -1));
  }
  return report;
}

double StrategyRunner::estimateBandwidth() const {
  return config_.deviceBandwidthBytesPerS.value_or(0) > 0 ? *config_.deviceBandwidthBytesPerS
                                                          : hostBandwidthBytesPerSecond();
}

BackwardOutcome StrategyRunner::estimateBackward(const StrategyInfo& s) {
  BackwardOutcome b;
  b.estimateBytes = dryRun(s).backwardBytes;
  // Each byte a backward allocates is written (zeros or a result) and read back about twice
  // (accumulation): ~3 passes over it at the measured rate, times 1.5 for what the probe
  // misses (cache misses, the allocator, a busy machine).
  b.estimateSeconds = 1.5 * 3.0 * static_cast<double>(b.estimateBytes) / estimateBandwidth();
  return b;
}

RunProgress StrategyRunner::progressOf(RunProgress::Phase phase, int index, int repeat) const {
  RunProgress p;
  p.phase = phase;
  if (index >= 0) {
    p.strategy = config_.strategies[size_t(index)];
    p.strategyIndex = index;
  }
  p.strategyCount = int(config_.strategies.size());
  p.repeat = repeat;
  p.repeatCount = config_.repeats;
  return p;
}

StrategyRun StrategyRunner::runOne(const StrategyInfo& s, int index,
                                   const BackwardOutcome& estimate, const ProgressFn& progress) {
  const Workload& w = config_.workload;
  StrategyRun run;
  run.strategy = s.name;
  run.requiresGrad = config_.requiresGrad;
  const bool hasData = config_.device != DeviceKind::Meta;

  run.backward.estimateBytes = estimate.estimateBytes;
  run.backward.estimateSeconds = estimate.estimateSeconds;

  std::vector<double> times;
  for (int r = 0; r < config_.repeats; ++r) {
    const bool last = r == config_.repeats - 1;
    if (progress) progress(progressOf(RunProgress::Phase::Forward, index, r + 1));
    const CachingAllocator::Options options{config_.deviceMemoryBytes,
                                            config_.recordTimeline && last, config_.pytorch};
    auto device = makeDevice(config_.device, options, config_.deviceFactory);
    CachingAllocator& alloc = device->allocator();
    Tensor a, c, out;
    try {
      a = deviceInput(inputs_.a, {w.n, w.i, w.j}, w.dtype, device, "a", MemoryCategory::Inputs);
      c = deviceInput(inputs_.c, {w.m, w.j, w.k}, w.dtype, device, "c", MemoryCategory::Inputs);
      a.setRequiresGrad(config_.requiresGrad.a);
      c.setRequiresGrad(config_.requiresGrad.c);
      const auto t0 = Clock::now();
      {
        OpScope op(device.get(), s.name);
        FlopCounter flops;
        out = s.run(a, c, inputs_.q, w.batch);
        run.forwardFlops = flops.total();
      }
      device->synchronize();
      times.push_back(secondsSince(t0));
    } catch (const OutOfMemoryError& e) {
      run.ok = false;
      run.error = e.what();
      run.current = alloc.current();
      run.peak = alloc.peak();
      if (config_.recordTimeline) run.timeline = captureTimeline(alloc);
      break;
    }
    if (!last) continue;

    out.setLabel("out").setCategory(MemoryCategory::Outputs);
    run.current = alloc.current();
    run.peak = alloc.peak();
    run.outputShape = out.sizes();
    const std::map<int64_t, std::string> callerHeld = {
        {a.storage().allocationId(), "input a, held by the caller"},
        {c.storage().allocationId(), "input c, held by the caller"},
        {out.storage().allocationId(), "the output, held by the caller as out"}};
    const auto reasons = aliveReasons(*device, callerHeld);
    markSavedForBackward(*device, callerHeld);
    run.keptAlive = groupKeptAlive(*device, reasons);
    const double statementEndUs = alloc.elapsedUs();
    if (hasData) {
      run.maxRelErr = maxRelativeError(out, reference_);
      if (auto warning = nonFiniteWarning("out", out, reference_); !warning.empty())
        run.accuracyWarnings.push_back(std::move(warning));
      if (config_.keepOutputs) run.out = hostCopy(out, "out");
    }

    BackwardOutcome& b = run.backward;
    if (config_.backward) {
      if (!out.requiresGrad()) {
        b.status = BackwardOutcome::Status::Skipped;
        b.reason = BackwardOutcome::Reason::NothingRequiresGrad;
        b.message = "nothing requires grad";
      } else if (hasData && b.estimateSeconds > config_.backwardLimitSeconds && !config_.force) {
        b.status = BackwardOutcome::Status::Skipped;
        b.reason = BackwardOutcome::Reason::OverTimeLimit;
        char buf[256];
        std::snprintf(buf, sizeof buf,
                      "backward would take about %.0f s here (its ops allocate %s, mostly "
                      "zero-filled gradients of whole inputs, written and read at about %.3g "
                      "GB/s)",
                      b.estimateSeconds, formatBytes(b.estimateBytes).c_str(),
                      estimateBandwidth() / 1e9);
        b.message = buf;
      } else {
        try {
          if (progress) progress(progressOf(RunProgress::Phase::Backward, index, config_.repeats));
          alloc.resetPeak();
          Tensor g = deviceInput(gradOutput_, out.sizes(), w.dtype, device, "grad_output",
                                 MemoryCategory::Gradients);
          const auto t0 = Clock::now();
          {
            OpScope op(device.get(), "backward");
            FlopCounter flops;
            out.backward(g);
            b.flops = flops.total();
          }
          device->synchronize();
          b.timeSeconds = secondsSince(t0);
          b.status = BackwardOutcome::Status::Ran;
          b.maxMemBytes = alloc.peak().allocatedBytes;
          b.curMemBytes = alloc.current().allocatedBytes;
          if (hasData) {
            checkGradient("dA", a.grad(), refDA_, b.maxRelErrDA, run.accuracyWarnings);
            checkGradient("dC", c.grad(), refDC_, b.maxRelErrDC, run.accuracyWarnings);
            if (config_.keepOutputs) {
              b.dA = hostCopy(a.grad(), "dA");
              b.dC = hostCopy(c.grad(), "dC");
            }
          }
        } catch (const OutOfMemoryError& e) {
          b.status = BackwardOutcome::Status::Failed;
          b.reason = BackwardOutcome::Reason::OutOfMemory;
          b.message = e.what();
        }
      }
    }
    if (config_.recordTimeline) {
      run.timeline = captureTimeline(alloc);
      run.timeline.aliveWhy = reasons;
      run.timeline.statementEndUs = statementEndUs;
    }
  }
  run.time = summarize(times);
  return run;
}

}  // namespace matmulviz
