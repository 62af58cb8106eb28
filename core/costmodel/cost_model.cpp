#include "core/costmodel/cost_model.h"

#include <algorithm>
#include <stdexcept>

namespace matmulviz::costmodel {
namespace {

// Datasheets: NVIDIA H100 Tensor Core GPU (SXM5: 3.35 TB/s HBM3, 67 TFLOP/s FP32), A100
// (SXM4 80 GB: 2.0 TB/s, 19.5 TFLOP/s FP32), T4 (320 GB/s, 8.1 TFLOP/s FP32). Bandwidths are
// what a device-to-device copy reaches, about 90 % (H100) and 80 % (A100) of the peak; launch
// latencies are typical figures for a launch from PyTorch's eager mode. H200 (SXM, 141 GB HBM3e,
// 4.8 TB/s, 67 TFLOP/s FP32): 4.3 TB/s is what a device-to-device copy reached on one, measured
// 2026-11-28 (NVIDIA H200, CUDA 13.0).
constexpr GpuProfile kProfiles[] = {
    {"h200", "NVIDIA H200 SXM (model)", 4.3e12, 67e12, 4e-6, 90},
    {"h100", "NVIDIA H100 SXM (model)", 3.0e12, 67e12, 4e-6, 90},
    {"a100", "NVIDIA A100 SXM 80GB (model)", 1.6e12, 19.5e12, 4e-6, 80},
    {"t4", "NVIDIA T4 (model)", 0.3e12, 8.1e12, 5e-6, 75},
};

std::uint64_t u(std::int64_t v) {
  return static_cast<std::uint64_t>(v);
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
  for (const GpuProfile& p : kProfiles) keys += (keys.empty() ? "" : "|") + std::string(p.key);
  return keys;
}

WorkCounts& WorkCounts::operator+=(const WorkCounts& o) {
  launches += o.launches;
  bytesRead += o.bytesRead;
  bytesWritten += o.bytesWritten;
  flops += o.flops;
  return *this;
}

Prediction predict(const WorkCounts& work, const GpuProfile& gpu) {
  Prediction p;
  p.memoryS = static_cast<double>(work.bytesRead + work.bytesWritten) / gpu.bandwidthBytesPerS;
  p.computeS = static_cast<double>(work.flops) / gpu.float32FlopsPerS;
  p.launchS = static_cast<double>(work.launches) * gpu.launchLatencyS;
  p.totalS = std::max(p.memoryS, p.computeS) + p.launchS;
  if (p.launchS >= std::max(p.memoryS, p.computeS)) {
    p.bound = "launch";
  } else {
    p.bound = p.memoryS >= p.computeS ? "memory" : "compute";
  }
  return p;
}

WorkCounts strategyCounts(std::string_view strategy, const StrategyWorkload& w) {
  const std::uint64_t e = u(w.elementBytes);
  const std::uint64_t items = u(w.n);
  // one item: out[n] [I, K] = a[n] [I, J] @ c' [J, K]
  const WorkCounts matmulItem{1, (u(w.i) * u(w.j) + u(w.j) * u(w.k)) * e, u(w.i) * u(w.k) * e,
                              2 * u(w.i) * u(w.j) * u(w.k)};
  // copying q (int64) to the device, then gathering `rows` matrices of c: read and write them
  const auto gather = [&](std::uint64_t rows) {
    return WorkCounts{2, rows * 8 + rows * u(w.j) * u(w.k) * e, rows * u(w.j) * u(w.k) * e, 0};
  };
  const WorkCounts cat{1, items * u(w.i) * u(w.k) * e, items * u(w.i) * u(w.k) * e, 0};
  const auto times = [](WorkCounts c, std::uint64_t n) {
    return WorkCounts{c.launches * n, c.bytesRead * n, c.bytesWritten * n, c.flops * n};
  };
  WorkCounts total;
  if (strategy == "strategy1") {  // strategy1(a, c[q]): gather, N matmuls of slices, cat
    total += gather(items);
    total += times(matmulItem, items);
    total += cat;
  } else if (strategy == "strategy2") {  // N matmuls with c[index[i]] (a view), cat
    total += times(matmulItem, items);
    total += cat;
  } else if (strategy == "strategy3") {  // N / batch bmm's, each on a gathered c[index[slice]]
    const std::uint64_t batches = items / u(w.batch);
    total += times(gather(u(w.batch)), batches);
    WorkCounts bmm = times(matmulItem, u(w.batch));
    bmm.launches = 1;
    total += times(bmm, batches);
    total += cat;
  } else if (strategy == "direct") {  // torch.matmul(a, c[q]): gather, one bmm
    total += gather(items);
    WorkCounts bmm = times(matmulItem, items);
    bmm.launches = 1;
    total += bmm;
  } else if (strategy == "fused") {  // gather_bmm: one launch reading c through q in place
    WorkCounts fused = times(matmulItem, items);
    fused.launches = 2;  // the copy of q to the device, the kernel
    fused.bytesRead += items * 8;
    total += fused;
  } else {
    throw std::invalid_argument("strategy '" + std::string(strategy) +
                                "' has no cost model; allowed: strategy1, strategy2, strategy3, "
                                "direct, fused");
  }
  return total;
}

}  // namespace matmulviz::costmodel
