#pragma once
// One run of matmul_with_importance (the multi-head assignment) on a fresh simulated device,
// recorded so that a GUI or the CLI can draw and print it without running it again: sizes, the
// importance mask, O3 and the gradients (host copies), curMem/maxMem, what was saved for backward
// and why, and the allocator's timeline. Qt-free.

#include "core/report/strategies_report.h"
#include "core/tensor/tensor.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace matmulviz {

struct MultiheadConfig {
  int64_t b = 2, s = 8, h = 16, e = 4, numHeads = 4;  ///< A1 [b, s, h], W1 [h, e]
  double topP = 1.0;                                  ///< important: P >= top_p ...
  std::optional<int64_t> topK;                        ///< ... and among the top_k (none = s)
  DType dtype = DType::Float32;                       ///< A1, W1, P, grad_output
  bool backward = false;  ///< run with a grad_output (given, or seeded N(0, 1))
  uint64_t seed = 0;      ///< seed of the random inputs
  bool recordTimeline = true;
  /// Makes the run's device from the allocator options (a GPU: kernels/cuda/cuda_device.h
  /// makeCudaDevice). Empty: the cpu device. A device with a ComputeBackend is synchronized
  /// before the run's clock is read.
  DeviceFactory deviceFactory;

  /// Throws std::invalid_argument naming the argument ("b", "s", "h", "e", "num_heads",
  /// "top_p", "top_k", "dtype") when a size is < 1, num_heads does not divide h, top_p is
  /// outside [0, 1], top_k outside [1, s], or dtype is not float32/float16/bfloat16.
  void validate() const;
};

/// Host tensors; an undefined one is drawn at random (seeded): A1 and W1 from N(0, 1) as the
/// seed's tests do, P uniform in [0, 1), grad_output from N(0, 1) (only with backward).
struct MultiheadInputs {
  Tensor A1, P, W1, gradOutput;
};

struct MultiheadReport {
  MultiheadConfig config;
  DeviceKind device = DeviceKind::Cpu;  ///< the kind of the device it ran on
  int64_t t = 0;                        ///< important tokens
  std::vector<uint8_t> mask;            ///< [b * s], 1 = important
  std::vector<int64_t> selectedTokens;  ///< flat i * s + j of each row of A3, ascending
  MultiheadInputs inputs;               ///< the host inputs used (grad_output when backward)
  Tensor O3, dA1, dW1;                  ///< host copies: [t, nh, e], [b, s, h], [h, e]
  /// Frobenius norms (computed in float64); NaN when the tensor is absent.
  double normO3 = std::numeric_limits<double>::quiet_NaN();
  double normDA1 = std::numeric_limits<double>::quiet_NaN();
  double normDW1 = std::numeric_limits<double>::quiet_NaN();
  MemoryCounters afterInputs;  ///< after the inputs were copied to the device (bytes)
  MemoryCounters current;      ///< after the call returned, its outputs held (bytes)
  MemoryCounters peak;         ///< since the inputs were made (bytes)
  /// Blocks alive right after the forward that autograd holds (saved for backward), by label
  /// and reason. Empty without backward: no graph is built.
  std::vector<KeptAlive> savedForBackward;
  int64_t savedBytes = 0;            ///< block bytes of those that are new memory (not an input's)
  std::vector<KeptAlive> keptAlive;  ///< blocks alive after return and why
  MemoryTimeline timeline;           ///< when config.recordTimeline
  double timeSeconds = 0;            ///< the call itself, wall clock
  /// FLOPs of the forward and (with backward) the backward, as PyTorch's FlopCounterMode counts
  /// them (core/ops/flop_counter.h; one multiply-add = 2): the per-head bmm and its backward.
  int64_t forwardFlops = 0, backwardFlops = 0;
};

/// The inputs a run will use: the given ones checked against `config` (shape; a floating dtype,
/// converted to config.dtype) and the missing ones drawn at random (see MultiheadInputs).
/// grad_output only with config.backward: its shape [t, nh, e] needs P's mask.
/// Throws std::invalid_argument naming "A1", "P", "W1" or "grad_output" (and as validate()).
MultiheadInputs prepareMultiheadInputs(const MultiheadConfig& config, MultiheadInputs given);

/// Runs matmulWithImportance on a fresh device (config.deviceFactory's, else the cpu device: a new
/// caching-allocator model holding only the inputs A1, P, W1 and, with backward, grad_output,
/// labelled so), and records it.
/// Throws std::invalid_argument (config.validate(); an input of the wrong shape, naming "A1",
/// "P", "W1" or "grad_output"), OutOfMemoryError when the device cannot hold it, and what the
/// factory throws (kernels::cuda::CudaError: no GPU).
MultiheadReport runMultihead(const MultiheadConfig& config, MultiheadInputs inputs = {});

/// sqrt(sum x^2) in float64 (NaN for an undefined tensor).
double frobeniusNorm(const Tensor& t);

}  // namespace matmulviz
