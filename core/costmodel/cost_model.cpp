#include "core/costmodel/cost_model.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <stdexcept>

#include "core/costmodel/kernel_cost.h"
#include "core/sim/launch_config.h"
#include "core/util/format_units.h"

namespace matmulviz::costmodel {
namespace {

// h200: measured on one NVIDIA H200 (CUDA 13.0, PyTorch 2.11.0+cu130), 2026-11-28: 4.3 TB/s a
// device-to-device copy reached; cuBLAS sgemm 4096^3 in 2.72 ms (50.5 TFLOP/s); PyTorch's host
// cost per op, 6 us, is strategy1's 18 us per row (2.37 s / 131072) over its three ops; the
// blocking copy, 30 us, is what strategy3's 63 us per step (32.3 ms / 512) leaves after its four
// ops and its kernels (both fitted to those two runs, so they predict them by construction). On
// chip: 132 SMs x 128 bytes x 1.98 GHz (datasheet). Pageable host-to-device bandwidth: 10 GB/s,
// a typical figure, not measured on it.
// h100 (SXM5: 3.35 TB/s HBM3, 67 TFLOP/s FP32, 132 SMs, 1.98 GHz), a100 (SXM4 80 GB: 2.0 TB/s,
// 19.5 TFLOP/s, 108 SMs, 1.41 GHz), t4 (320 GB/s, 8.1 TFLOP/s, 40 SMs at 64 bytes, 1.59 GHz):
// datasheets; bandwidths are what a device-to-device copy reaches, about 90 % (H100) and 80 %
// (A100) of the peak; the sgemm rate is 0.75 of the peak, the fraction the H200 reached; the host
// terms are the H200's (they are PyTorch's and the host's, not the GPU's).
const GpuProfile kProfiles[] = {
    {"h200", "NVIDIA H200 SXM (model)", 4.3e12, 67e12, 4e-6, 90, 132 * 128 * 1.98e9, 50.5e12, 6e-6,
     30e-6, 10e9,
     "measured on an NVIDIA H200 with PyTorch 2.11.0+cu130, 2026-11-28, and its datasheet"},
    {"h100", "NVIDIA H100 SXM (model)", 3.0e12, 67e12, 4e-6, 90, 132 * 128 * 1.98e9, 50e12, 6e-6,
     30e-6, 10e9, "datasheet; host terms as measured with an H200"},
    {"a100", "NVIDIA A100 SXM 80GB (model)", 1.6e12, 19.5e12, 4e-6, 80, 108 * 128 * 1.41e9, 14.6e12,
     6e-6, 30e-6, 10e9, "datasheet; host terms as measured with an H200"},
    {"t4", "NVIDIA T4 (model)", 0.3e12, 8.1e12, 5e-6, 75, 40 * 64 * 1.59e9, 6.1e12, 6e-6, 30e-6,
     6e9, "datasheet; host terms as measured with an H200"},
};

std::uint64_t asCount(std::int64_t v) {
  return static_cast<std::uint64_t>(v);
}

WorkCounts times(WorkCounts c, std::uint64_t n) {
  return WorkCounts{c.launches * n, c.bytesRead * n, c.bytesWritten * n, c.flops * n,
                    c.onChipBytes * n};
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return out;
}

/// formatSeconds without trailing zeros: 6e-6 -> "6 us", 3.02e-5 -> "30.2 us".
std::string us(double s) {
  std::string t = formatSeconds(s);
  const std::size_t space = t.find(' ');
  const std::size_t dot = t.find('.');
  if (space == std::string::npos || dot == std::string::npos || dot > space) return t;
  std::size_t end = space;
  while (end > dot + 1 && t[end - 1] == '0') --end;
  if (end == dot + 1) end = dot;
  return t.substr(0, end) + t.substr(space);
}

/// formatRate without the space between prefix and unit: "33.5 TB/s", "50.5 TFLOP/s".
std::string rate(double perSecond, const std::string& unit) {
  std::string r = formatRate(perSecond, unit);
  const std::size_t at = r.find(" " + unit + "/s");
  if (at != std::string::npos && at > 0 && std::isalpha(static_cast<unsigned char>(r[at - 1])))
    r.erase(at, 1);
  return r;
}

/// "1 op", "3 ops".
std::string ops(std::uint64_t n) {
  return std::to_string(n) + (n == 1 ? " op" : " ops");
}

}  // namespace

std::span<const GpuProfile> gpuProfiles() {
  return kProfiles;
}

const GpuProfile* findGpuProfile(std::string_view key) {
  for (const GpuProfile& p : kProfiles) {
    if (p.key == key) return &p;
  }
  return nullptr;
}

std::string gpuProfileKeys() {
  std::string keys;
  for (const GpuProfile& p : kProfiles) keys += (keys.empty() ? "" : "|") + p.key;
  return keys;
}

const GpuProfile* profileForDeviceName(std::string_view deviceName) {
  const std::string name = lower(deviceName);
  for (const GpuProfile& p : kProfiles) {
    const std::size_t at = name.find(p.key);
    // "h100" in "nvidia h100 80gb hbm3", not inside another word
    if (at != std::string::npos && (at == 0 || name[at - 1] == ' ')) return &p;
  }
  return nullptr;
}

WorkCounts& WorkCounts::operator+=(const WorkCounts& o) {
  launches += o.launches;
  bytesRead += o.bytesRead;
  bytesWritten += o.bytesWritten;
  flops += o.flops;
  onChipBytes += o.onChipBytes;
  return *this;
}

Prediction predict(const WorkCounts& work, const GpuProfile& gpu) {
  return predict(work, gpu, gpu.float32FlopsPerS);
}

Prediction predict(const WorkCounts& work, const GpuProfile& gpu, double flopsPerS) {
  Prediction p;
  p.memoryS = static_cast<double>(work.bytesRead + work.bytesWritten) / gpu.bandwidthBytesPerS;
  p.onChipS =
      gpu.onChipBytesPerS > 0 ? static_cast<double>(work.onChipBytes) / gpu.onChipBytesPerS : 0;
  p.computeS = flopsPerS > 0 ? static_cast<double>(work.flops) / flopsPerS : 0;
  p.launchS = static_cast<double>(work.launches) * gpu.launchLatencyS;
  const double busiest = std::max({p.memoryS, p.onChipS, p.computeS});
  p.totalS = busiest + p.launchS;
  const std::string launches = std::to_string(work.launches) +
                               (work.launches == 1 ? " launch x " : " launches x ") +
                               us(gpu.launchLatencyS);
  if (p.launchS >= busiest) {
    p.bound = "launch";
    p.explanation = launches + " (the work itself " + us(busiest) + ")";
    return p;
  }
  if (busiest == p.memoryS) {
    p.bound = "memory";
    p.explanation = formatSize(static_cast<std::int64_t>(work.bytesRead + work.bytesWritten)) +
                    " of device memory at " + rate(gpu.bandwidthBytesPerS, "B");
  } else if (busiest == p.onChipS) {
    p.bound = "on-chip";
    p.explanation = std::to_string(work.onChipBytes / 128) +
                    " 128-byte lines through L1/shared at " + rate(gpu.onChipBytesPerS, "B");
  } else {
    p.bound = "compute";
    p.explanation = std::to_string(work.flops) + " FLOPs at " + rate(flopsPerS, "FLOP");
  }
  p.explanation += " = " + us(busiest) + ", + " + launches;
  return p;
}

std::vector<StrategyPhase> strategyPhases(std::string_view strategy, const StrategyWorkload& w) {
  const std::uint64_t e = asCount(w.elementBytes);
  const std::uint64_t items = asCount(w.n);
  const std::uint64_t cItem = asCount(w.j) * asCount(w.k) * e;  // one matrix of c, bytes
  // one matmul of a row: out[n] [I, K] = a[n] [I, J] @ c' [J, K], a cuBLAS launch
  const WorkCounts matmulItem{1, asCount(w.i) * asCount(w.j) * e + cItem,
                              asCount(w.i) * asCount(w.k) * e,
                              2 * asCount(w.i) * asCount(w.j) * asCount(w.k), 0};
  // gathering `rows` matrices of c through an index already on the device: read, write them
  const auto gather = [&](std::uint64_t rows) {
    return WorkCounts{1, rows * 8 + rows * cItem, rows * cItem, 0, 0};
  };
  const StrategyPhase cat{"cat", 1, 1, 0,
                          WorkCounts{1, items * asCount(w.i) * asCount(w.k) * e,
                                     items * asCount(w.i) * asCount(w.k) * e, 0, 0}};
  const auto batched = [&](std::uint64_t rows) {  // one bmm over `rows` items
    WorkCounts bmm = times(matmulItem, rows);
    bmm.launches = 1;
    return bmm;
  };
  if (strategy == "strategy1") {  // c[q] (copy of q, gather), then per row a[i:i+1], c_q[i], matmul
    return {{"c[q]", 1, 1, items * 8, gather(items)}, {"rows", items, 3, 0, matmulItem}, cat};
  }
  if (strategy == "strategy2") {  // per row a[i:i+1], q[i], c[q[i]] (a view), matmul
    return {{"rows", items, 4, 0, matmulItem}, cat};
  }
  if (strategy ==
      "strategy3") {  // per step a[..], q[..], c[q[..]] (copy of the index, gather), bmm
    const std::uint64_t b = asCount(w.batch), steps = (items + b - 1) / b;
    WorkCounts step = gather(b);
    step += batched(b);
    return {{"steps", steps, 4, b * 8, step}, cat};
  }
  if (strategy == "direct") {  // c[q] (copy of q, gather), one bmm
    WorkCounts work = gather(items);
    work += batched(items);
    return {{"c[q] and bmm", 1, 2, items * 8, work}};
  }
  if (strategy == "fused") {
    // the copy of q, then kernel 08 (bucketing and one block per matrix of c) where its
    // c[m] fits in shared memory as float32 (core/ops/grouped_bmm_rule.h), else gather_bmm
    // reading c through q in place
    const bool grouped = w.elementBytes == 4 && cItem <= sim::CudaLimits::maxSharedBytesPerBlock;
    const std::string kernelName = grouped ? "grouped_bmm" : "gather_bmm";
    const KernelShape kernel{kernelName, w.i, w.j, w.k, 16, w.n, w.m};
    return {{kernelName, 1, 1, items * 8, kernelCounts(kernel), kernelName}};
  }
  throw std::invalid_argument("strategy '" + std::string(strategy) +
                              "' has no cost model; allowed: strategy1, strategy2, strategy3, "
                              "direct, fused");
}

WorkCounts strategyCounts(std::string_view strategy, const StrategyWorkload& w) {
  WorkCounts total;
  for (const StrategyPhase& p : strategyPhases(strategy, w)) total += times(p.device, p.repeats);
  return total;
}

Prediction predictStrategy(std::string_view strategy, const StrategyWorkload& w,
                           const GpuProfile& gpu) {
  Prediction total;
  double deviceS = 0;
  double busiest[3] = {0, 0, 0};  // memory, on-chip, compute of the device's kernels
  for (const StrategyPhase& phase : strategyPhases(strategy, w)) {
    const double n = static_cast<double>(phase.repeats);
    const double opsS = static_cast<double>(phase.hostOps) * gpu.hostOpS;
    const double copyS = phase.blockingCopyBytes > 0
                             ? gpu.blockingCopyS + static_cast<double>(phase.blockingCopyBytes) /
                                                       gpu.hostToDeviceBytesPerS
                             : 0;
    Prediction dev = predict(phase.device, gpu, gpu.sgemmFlopsPerS);
    if (!phase.kernelModel.empty())
      dev = predictKernel({phase.kernelModel, w.i, w.j, w.k, 16, w.n, w.m}, gpu);
    total.memoryS += n * dev.memoryS;
    total.onChipS += n * dev.onChipS;
    total.computeS += n * dev.computeS;
    total.launchS += n * dev.launchS;
    busiest[0] += n * dev.memoryS;
    busiest[1] += n * dev.onChipS;
    busiest[2] += n * dev.computeS;
    total.hostS += n * (opsS + copyS);
    deviceS += n * dev.totalS;
    // "131072 rows x 3 ops x 6 us ...", "c[q]: 1 op x 6 us ..."
    std::string line = phase.repeats > 1 ? std::to_string(phase.repeats) + " " + phase.what + " x "
                                         : phase.what + ": ";
    double phaseS = 0;
    if (phase.blockingCopyBytes > 0) {
      phaseS = n * (opsS + copyS + dev.totalS);
      line += std::string(phase.repeats > 1 ? "(" : "") + ops(phase.hostOps) + " x " +
              us(gpu.hostOpS) + " + a blocking copy of " +
              formatSize(static_cast<std::int64_t>(phase.blockingCopyBytes)) + " " + us(copyS) +
              " + device " + us(dev.totalS) + (phase.repeats > 1 ? ")" : "");
    } else {
      phaseS = std::max(n * opsS, n * dev.totalS);
      line += ops(phase.hostOps) + " x " + us(gpu.hostOpS) +
              (opsS >= dev.totalS ? " on the host (device " + us(n * dev.totalS) + " behind it)"
                                  : " on the host behind the device's " + us(n * dev.totalS));
    }
    line += " = " + us(phaseS);
    total.totalS += phaseS;
    if (!total.explanation.empty()) total.explanation += "; ";
    total.explanation += line;
  }
  if (total.hostS >= deviceS) {
    total.bound = "host";
  } else if (total.launchS >= std::max({busiest[0], busiest[1], busiest[2]})) {
    total.bound = "launch";
  } else if (busiest[0] >= std::max(busiest[1], busiest[2])) {
    total.bound = "memory";
  } else {
    total.bound = busiest[1] >= busiest[2] ? "on-chip" : "compute";
  }
  return total;
}

}  // namespace matmulviz::costmodel
