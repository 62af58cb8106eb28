#pragma once
// Which kernel torch.nn.functional.scaled_dot_product_attention runs on a CUDA GPU, as PyTorch
// 2.x's dispatch decides it (aten/src/ATen/native/transformers/cuda/sdp_utils.cpp,
// select_sdp_backend; the shared checks of sdp_utils_cpp.h): the first backend of the priority
// order whose checks pass: cuDNN, flash, memory-efficient, math when cuDNN is preferred
// (check_prefer_cudnn_attention: a runtime cuDNN newer than 9.15.0 on sm_9x or sm_10x, unless
// TORCH_CUDNN_SDPA_DEPRIORITIZED), else the context's order (default flash, memory-efficient,
// math, cuDNN). Read from the PyTorch sources of the 2.11 line; the memory-efficient choice for
// float32 on an H200 is measured (tests/reference/gpu/snapshots, transformer_adamw_3_steps).
// Shapes only: it needs no tensors, so the engine and the PyTorch adapter ask the same rule.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace matmulviz {

/// at::SDPBackend's values (aten/src/ATen/native/transformers/sdp_utils_cpp.h).
enum class SdpaBackend : int { Error = -1, Math = 0, Flash = 1, Efficient = 2, CuDnn = 3 };

/// "math", "flash_attention", "efficient_attention", "cudnn_attention", "error".
std::string sdpaBackendName(SdpaBackend b);

/// One of query, key, value or attn_mask as the checks read it.
struct SdpaTensor {
  std::string dtype;  ///< PyTorch's name: "float32", "float16", "bfloat16", "float64", "bool"
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;  ///< elements
  int64_t storageOffset = 0;     ///< elements
  int64_t elementBytes = 4;
  bool requiresGrad = false;
};

struct SdpaCall {
  SdpaTensor query, key, value;  ///< [batch, heads, L, E], [batch, heads_kv, S, E], [.., S, Ev]
  std::optional<SdpaTensor> attnMask;
  double dropoutP = 0.0;
  bool isCausal = false;
  bool enableGqa = false;
  bool gradEnabled = true;  ///< at::GradMode::is_enabled()
};

/// The switches PyTorch reads from its global context and environment.
struct SdpaSettings {
  bool flash = true, memEfficient = true, math = true, cudnn = true;  ///< torch.backends.cuda
  bool deterministic = false;          ///< torch.use_deterministic_algorithms(True)
  bool deterministicWarnOnly = false;  ///< ... warn_only=True
  /// The context's order (torch._C._get_sdp_priority_order()); empty: PyTorch's default.
  std::vector<SdpaBackend> priority;
  long cudnnVersion = 91900;        ///< torch.backends.cudnn.version() (the 2.11 wheel's 9.19)
  bool cudnnDeprioritized = false;  ///< TORCH_CUDNN_SDPA_DEPRIORITIZED=1
};

/// The choice and, for each backend tried before it, why it was not taken.
struct SdpaChoice {
  SdpaBackend backend = SdpaBackend::Math;
  std::vector<std::string> skipped;  ///< "flash_attention: needs float16 or bfloat16 inputs"
};

/// select_sdp_backend for dense (not nested) inputs on a GPU of compute capability
/// `major`.`minor`. Error when every backend is switched off or fails and math is disabled.
SdpaChoice selectSdpaBackend(const SdpaCall& call, int major, int minor,
                             const SdpaSettings& settings = {});

}  // namespace matmulviz
