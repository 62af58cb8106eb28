#pragma once
// A cost model, clearly a model and not a measurement. For a kernel launch: bytes moved through
// device memory, bytes through the SMs' L1/shared memory, FLOPs and launches, and a prediction
// as the largest of the three rates plus a fixed cost per launch (the roofline of Williams,
// Waterman and Patterson, "Roofline: an insightful visual performance model", CACM 2009, with an
// on-chip level as in the hierarchical roofline). For a strategy, also the host: PyTorch's eager
// mode spends a few microseconds of CPU per op (dispatcher and Python), and a copy of a CPU index
// to the device blocks the host until the GPU is done. strategy1 and strategy2 are bound by
// that host cost (131072 rows x 3 or 4 ops x 6 us), strategy3 by the host and its blocking copies,
// direct by device memory.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace matmulviz::costmodel {

/// A GPU as the model sees it: datasheet numbers, numbers measured on one such GPU, or (a
/// profile file written by `matmulviz-cli calibrate`) numbers measured on the user's own GPU.
struct GpuProfile {
  std::string key;            ///< "h200", as --model spells it
  std::string name;           ///< "NVIDIA H200 SXM (model)"
  double bandwidthBytesPerS;  ///< device memory: (bytes read + bytes written) per second
  double float32FlopsPerS;    ///< float32 FLOP/s without tensor cores
  double launchLatencyS;      ///< seconds per kernel launch on the device
  /// CUDA compute capability as major * 10 + minor (90 for sm_90, Hopper): what PyTorch keys
  /// architecture-dependent choices on, such as the cuBLAS workspace size.
  int computeCapability;
  /// L1 and shared memory of all SMs together: SMs x 128 bytes (one cache line, a "wavefront")
  /// per clock. A warp's access that touches L distinct 128-byte lines takes L of them.
  double onChipBytesPerS = 0;
  double sgemmFlopsPerS = 0;     ///< cuBLAS sgemm at a large square size, FLOP/s
  double hostOpS = 6e-6;         ///< host time of one PyTorch op in eager mode (dispatcher, Python)
  double blockingCopyS = 30e-6;  ///< host time of a blocking copy of a small CPU tensor
                                 ///< to the device, synchronisation included
  double hostToDeviceBytesPerS = 10e9;  ///< copy bandwidth from pageable host memory
  std::string source;                   ///< where the numbers come from, one line
};

/// The built-in profiles: h200 (measured on one, 2026-11-28), h100, a100, t4 (datasheets).
std::span<const GpuProfile> gpuProfiles();

/// The built-in profile called `key`, or nullptr.
const GpuProfile* findGpuProfile(std::string_view key);

/// "h200|h100|a100|t4".
std::string gpuProfileKeys();

/// The built-in profile whose GPU a CUDA device name ("NVIDIA H200 (sm_90)") names, or nullptr.
const GpuProfile* profileForDeviceName(std::string_view deviceName);

/// What a piece of work does to the GPU.
struct WorkCounts {
  std::uint64_t launches = 0;      ///< kernel launches and host-device copies
  std::uint64_t bytesRead = 0;     ///< from device memory
  std::uint64_t bytesWritten = 0;  ///< to device memory
  std::uint64_t flops = 0;         ///< floating-point operations (an FMA is 2)
  /// Bytes through L1/shared memory, counted in 128-byte lines per warp access (0: not counted).
  std::uint64_t onChipBytes = 0;

  WorkCounts& operator+=(const WorkCounts& o);
};

struct Prediction {
  double memoryS = 0;   ///< (bytesRead + bytesWritten) / bandwidth
  double onChipS = 0;   ///< onChipBytes / on-chip bandwidth
  double computeS = 0;  ///< flops / peak (the sgemm rate for cuBLAS work)
  double launchS = 0;   ///< launches x launch latency
  double hostS = 0;     ///< strategies: host time (PyTorch ops and blocking copies)
  double totalS = 0;    ///< the prediction, seconds
  /// "launch", "memory", "on-chip", "compute" or "host": the term that sets totalS.
  std::string_view bound;
  /// How totalS comes about, in words with the numbers ("131072 rows x 3 ops x 6 us ...").
  std::string explanation;
};

/// The model's prediction of one kernel's `work` on `gpu`:
///   max(bytes / bandwidth, onChipBytes / on-chip bandwidth, flops / float32 peak)
///   + launches x launch latency.
Prediction predict(const WorkCounts& work, const GpuProfile& gpu);

/// The same with `flopsPerS` as the compute rate (cuBLAS: gpu.sgemmFlopsPerS).
Prediction predict(const WorkCounts& work, const GpuProfile& gpu, double flopsPerS);

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

/// One part of a strategy as PyTorch executes it: `repeats` times, `hostOps` ops on the host and
/// the kernels `device` on the GPU; with `blockingCopyBytes` > 0, each repeat first copies that
/// many bytes of a CPU tensor to the device and waits for the GPU (c[idx] with a CPU idx).
struct StrategyPhase {
  std::string what;  ///< "rows", "c[q]", "cat", "steps"
  std::uint64_t repeats = 1;
  std::uint64_t hostOps = 0;
  std::uint64_t blockingCopyBytes = 0;
  WorkCounts device;  ///< one repeat's kernels (cuBLAS's matmuls among them)
  /// "grouped_bmm" or "gather_bmm": one repeat's device time is that kernel's model
  /// (kernel_cost.h, TPB 16) at
  /// the workload's sizes; empty: the roofline of `device`, matmuls at the sgemm rate.
  std::string kernelModel;
};

/// The phases of strategy1, strategy2, strategy3, direct or fused as the seed writes them
/// (PyTorch semantics: c[q] with a CPU q copies q to the device, blocking, then gathers an
/// [N, J, K] copy; a[i:i+1], q[i] and c[q[i]] are views but each is an op; each matmul of a slice
/// is one cuBLAS launch; cat is one launch reading and writing its output). fused is this
/// project's gather_bmm kernel (core/costmodel/kernel_cost.h). Throws std::invalid_argument for
/// another name.
std::vector<StrategyPhase> strategyPhases(std::string_view strategy, const StrategyWorkload& w);

/// Device counts of a strategy's forward: the sum of its phases' kernels.
WorkCounts strategyCounts(std::string_view strategy, const StrategyWorkload& w);

/// The predicted forward time of `strategy` on `gpu`, host included. Per phase: with a blocking
/// copy, each repeat takes host + copy + device time (the copy waits for the GPU); else host and
/// device overlap, max(repeats x host, repeats x device). The phases add up. Throws as
/// strategyPhases.
Prediction predictStrategy(std::string_view strategy, const StrategyWorkload& w,
                           const GpuProfile& gpu);

}  // namespace matmulviz::costmodel
