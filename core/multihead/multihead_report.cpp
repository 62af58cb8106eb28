#include "core/multihead/multihead_report.h"

#include "core/autograd/grad_mode.h"
#include "core/multihead/multihead.h"
#include "core/ops/flop_counter.h"
#include "core/ops/ops.h"
#include "core/report/report_inputs.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <random>
#include <stdexcept>
#include <unordered_map>

namespace matmulviz {

namespace {

using Clock = std::chrono::steady_clock;

void requirePositive(int64_t v, const char* name) {
  if (v < 1) throw std::invalid_argument(std::string(name) + ": must be at least 1");
}

/// The host tensor converted to `dtype` when it is another float type; its shape checked.
Tensor checkedInput(const Tensor& t, const Shape& sizes, DType dtype, const char* name) {
  if (t.sizes() != sizes)
    throw std::invalid_argument(std::string(name) + ": expected shape " + shapeToString(sizes) +
                                " but got " + t.shapeString());
  if (!isFloating(t.dtype()))
    throw std::invalid_argument(std::string(name) + ": expected a floating point tensor, got " +
                                std::string(dtypeName(t.dtype())));
  if (t.dtype() == dtype) return t;
  NoGradGuard noGrad;
  return toDType(t, dtype);
}

/// Live blocks grouped by (label, why); `why` of a block comes from `reasonOf`, blocks for
/// which it returns "" are left out.
template <typename F>
std::vector<KeptAlive> groupLive(const DeviceContext& device, F&& reasonOf) {
  std::map<std::pair<std::string, std::string>, KeptAlive> groups;
  for (const AllocationRecord* rec : device.allocator().liveRecords()) {
    const std::string why = reasonOf(*rec);
    if (why.empty()) continue;
    KeptAlive& k = groups[{rec->label, why}];
    k.label = rec->label;
    k.why = why;
    k.bytes += rec->blockBytes;
    ++k.count;
  }
  std::vector<KeptAlive> out;
  for (auto& [key, k] : groups) out.push_back(std::move(k));
  std::stable_sort(out.begin(), out.end(), [](auto& x, auto& y) { return x.bytes > y.bytes; });
  return out;
}

std::string holdersText(const DeviceContext& device, int64_t id) {
  std::string out;
  if (const Storage* s = device.storageOf(id))
    for (const auto& [why, count] : s->holders()) out += (out.empty() ? "" : "; ") + why;
  return out;
}

/// Why a block is alive after the call: an input, an output, or what autograd saved.
std::string aliveReason(const DeviceContext& device, const AllocationRecord& rec,
                        const std::map<int64_t, std::string>& inputIds,
                        const ImportanceResult& res) {
  if (auto it = inputIds.find(rec.id); it != inputIds.end()) return it->second;
  for (const auto& [t, name] : {std::pair{&res.O3, "O3"}, {&res.dA1, "dA1"}, {&res.dW1, "dW1"}})
    if (t->defined() && t->storage().allocationId() == rec.id)
      return std::string("output ") + name + ", held by the caller";
  const std::string saved = holdersText(device, rec.id);
  return saved.empty() ? std::string("referenced by a tensor outside the call") : saved;
}

MemoryTimeline captureCallTimeline(const CachingAllocator& alloc) {
  MemoryTimeline t;
  t.events = alloc.events();
  t.opNames = alloc.opNames();
  t.spans = alloc.opSpans();
  for (const auto& [id, rec] : alloc.records()) t.records.push_back(rec);
  std::sort(t.records.begin(), t.records.end(), [](auto& x, auto& y) { return x.id < y.id; });
  t.statementEndUs = alloc.elapsedUs();
  return t;
}

}  // namespace

MultiheadInputs prepareMultiheadInputs(const MultiheadConfig& c, MultiheadInputs in) {
  c.validate();
  const DType dt = c.dtype;
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  in.A1 = in.A1.defined() ? checkedInput(in.A1, {c.b, c.s, c.h}, dt, "A1")
                          : randomHost({c.b, c.s, c.h}, dt, c.seed, normal, "A1");
  in.P = in.P.defined() ? checkedInput(in.P, {c.b, c.s}, dt, "P")
                        : randomHost({c.b, c.s}, dt, c.seed + 1, uniform, "P");
  in.W1 = in.W1.defined() ? checkedInput(in.W1, {c.h, c.e}, dt, "W1")
                          : randomHost({c.h, c.e}, dt, c.seed + 2, normal, "W1");
  if (!c.backward) {
    in.gradOutput = Tensor();
    return in;
  }
  const auto mask = importanceMask(in.P, c.topP, c.topK);
  const auto t = static_cast<int64_t>(std::count(mask.begin(), mask.end(), 1));
  const Shape gs{t, c.numHeads, c.e};
  in.gradOutput = in.gradOutput.defined() ? checkedInput(in.gradOutput, gs, dt, "grad_output")
                                          : randomHost(gs, dt, c.seed + 3, normal, "grad_output");
  return in;
}

void MultiheadConfig::validate() const {
  requirePositive(b, "b");
  requirePositive(s, "s");
  requirePositive(h, "h");
  requirePositive(e, "e");
  requirePositive(numHeads, "num_heads");
  if (h % numHeads != 0)
    throw std::invalid_argument("num_heads: " + std::to_string(numHeads) +
                                " does not divide the hidden size h = " + std::to_string(h));
  if (!(topP >= 0.0 && topP <= 1.0))
    throw std::invalid_argument("top_p: " + std::to_string(topP) + " is outside [0, 1]");
  if (topK && (*topK < 1 || *topK > s))
    throw std::invalid_argument("top_k: " + std::to_string(*topK) + " is outside [1, s] = [1, " +
                                std::to_string(s) + "]");
  if (dtype != DType::Float32 && dtype != DType::Float16 && dtype != DType::BFloat16)
    throw std::invalid_argument("dtype: '" + std::string(dtypeName(dtype)) +
                                "' is not allowed (allowed: float32, float16, bfloat16)");
}

double frobeniusNorm(const Tensor& t) {
  if (!t.defined() || !t.hasData()) return std::numeric_limits<double>::quiet_NaN();
  double acc = 0;
  for (double v : t.toDoubles()) acc += v * v;
  return std::sqrt(acc);
}

MultiheadReport runMultihead(const MultiheadConfig& config, MultiheadInputs inputs) {
  config.validate();
  MultiheadReport r;
  r.config = config;
  r.inputs = prepareMultiheadInputs(config, std::move(inputs));
  const CachingAllocator::Options options{std::nullopt, config.recordTimeline};
  const DevicePtr device = makeDevice(DeviceKind::Cpu, options, config.deviceFactory);
  r.device = device->kind();
  const MultiheadInputs& in = r.inputs;
  const Tensor A1 = toDevice(in.A1, device, "A1").setCategory(MemoryCategory::Inputs);
  const Tensor P = toDevice(in.P, device, "P").setCategory(MemoryCategory::Inputs);
  const Tensor W1 = toDevice(in.W1, device, "W1").setCategory(MemoryCategory::Inputs);
  Tensor g;
  if (in.gradOutput.defined())
    g = toDevice(in.gradOutput, device, "grad_output").setCategory(MemoryCategory::Gradients);
  r.afterInputs = device->allocator().current();
  std::map<int64_t, std::string> inputIds;
  for (const auto& [t, name] : {std::pair{&A1, "A1"}, {&P, "P"}, {&W1, "W1"}, {&g, "grad_output"}})
    if (t->defined()) inputIds[t->storage().allocationId()] = std::string("input ") + name;

  FlopCounter flops;
  const auto afterForward = [&] {
    r.forwardFlops = flops.total();
    r.savedForBackward = groupLive(*device, [&](const AllocationRecord& rec) {
      std::string why = holdersText(*device, rec.id);
      if (!why.empty() && !inputIds.count(rec.id)) {
        r.savedBytes += rec.blockBytes;
        device->allocator().setCategory(rec.id, MemoryCategory::SavedForBackward);
      }
      return why;
    });
  };
  const auto t0 = Clock::now();
  ImportanceResult res;
  {
    OpScope op(device.get(), "matmul_with_importance");
    res =
        matmulWithImportance(A1, P, W1, config.numHeads, config.topP, config.topK, g, afterForward);
  }
  device->synchronize();  // a GPU's queued work
  r.timeSeconds = std::chrono::duration<double>(Clock::now() - t0).count();
  r.backwardFlops = flops.total() - r.forwardFlops;
  r.current = device->allocator().current();
  r.peak = device->allocator().peak();
  std::unordered_map<int64_t, std::string> reasons;
  r.keptAlive = groupLive(*device, [&](const AllocationRecord& rec) {
    return reasons[rec.id] = aliveReason(*device, rec, inputIds, res);
  });
  if (config.recordTimeline) {
    r.timeline = captureCallTimeline(device->allocator());
    r.timeline.aliveWhy = std::move(reasons);
  }
  r.t = static_cast<int64_t>(res.selectedTokens.size());
  r.mask = std::move(res.mask);
  r.selectedTokens = std::move(res.selectedTokens);
  r.O3 = hostCopy(res.O3, "O3");
  r.dA1 = hostCopy(res.dA1, "dA1");
  r.dW1 = hostCopy(res.dW1, "dW1");
  r.normO3 = frobeniusNorm(r.O3);
  r.normDA1 = frobeniusNorm(r.dA1);
  r.normDW1 = frobeniusNorm(r.dW1);
  return r;
}

}  // namespace matmulviz
