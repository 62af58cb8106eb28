#pragma once
// A cost model, clearly a model and not a measurement: for a kernel launch or a strategy,
// count launches, bytes read and written and FLOPs, and predict the time on a named GPU as
//   max(bytes / bandwidth, flops / peak) + launches x launch_latency
// (the roofline of Williams, Waterman and Patterson, "Roofline: an insightful visual performance
// model", CACM 2009, plus a fixed cost per launch). It ignores caches, occupancy and overlap of
// launches; it is meant to show orders of magnitude, e.g. why 131072 launches of a tiny matmul
// (strategy1, strategy2) are slow on a GPU and one batched launch (strategy3, direct) is not.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace matmulviz::costmodel {

/// A GPU as the model sees it. Figures are the vendors' datasheet numbers, rounded.
struct GpuProfile {
  std::string_view key;       ///< "h100", as --model spells it
  std::string_view name;      ///< "NVIDIA H100 SXM (model)"
  double bandwidthBytesPerS;  ///< device-memory copy bandwidth, bytes per second
  double float32FlopsPerS;    ///< float32 FLOP/s without tensor cores
  double launchLatencyS;      ///< seconds per kernel launch or small copy
  /// CUDA compute capability as major * 10 + minor (90 for sm_90, Hopper): what PyTorch keys
  /// architecture-dependent choices on, such as the cuBLAS workspace size.
  int computeCapability;
};

/// h200 (4.3 TB/s, 67 TFLOP/s, 4 us, sm_90), h100 (3.0 TB/s, 67 TFLOP/s, 4 us, sm_90),
/// a100 (1.6 TB/s, 19.5 TFLOP/s, 4 us, sm_80), t4 (0.3 TB/s, 8.1 TFLOP/s, 5 us, sm_75).
std::span<const GpuProfile> gpuProfiles();

/// The profile called `key`, or nullptr.
const GpuProfile* findGpuProfile(std::string_view key);

/// "h200|h100|a100|t4".
std::string gpuProfileKeys();

/// What a piece of work does to the GPU.
struct WorkCounts {
  std::uint64_t launches = 0;      ///< kernel launches and host-device copies
  std::uint64_t bytesRead = 0;     ///< from device memory
  std::uint64_t bytesWritten = 0;  ///< to device memory
  std::uint64_t flops = 0;         ///< floating-point operations (an FMA is 2)

  WorkCounts& operator+=(const WorkCounts& o);
};

struct Prediction {
  double memoryS = 0;   ///< (bytesRead + bytesWritten) / bandwidth
  double computeS = 0;  ///< flops / peak
  double launchS = 0;   ///< launches x launch latency
  double totalS = 0;    ///< max(memoryS, computeS) + launchS
  /// "launch", "memory" or "compute": the largest of the three terms.
  std::string_view bound;
};

/// The model's prediction of `work` on `gpu`.
Prediction predict(const WorkCounts& work, const GpuProfile& gpu);

/// The seed's workload (the forum post): a [N, I, J], c [M, J, K], q [N] int64, strategy3's batch,
/// bytes per element of a and c (4 for float32, 2 for float16/bfloat16).
struct StrategyWorkload {
  std::int64_t n = 131072;
  std::int64_t m = 2048;
  std::int64_t i = 1;
  std::int64_t j = 64;
  std::int64_t k = 64;
  std::int64_t batch = 256;
  std::int64_t elementBytes = 4;
};

/// Forward-pass counts of strategy1, strategy2, strategy3, direct or fused as the seed writes
/// them (PyTorch semantics: c[q] with a CPU q copies q to the device, then gathers an [N, J, K]
/// copy; a[i:i+1] and c[index[i]] are views; each matmul of a slice is one launch; cat is one
/// launch reading and writing its output size). Throws std::invalid_argument for another name.
WorkCounts strategyCounts(std::string_view strategy, const StrategyWorkload& w);

}  // namespace matmulviz::costmodel
