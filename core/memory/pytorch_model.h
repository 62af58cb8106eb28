#pragma once
// Which PyTorch, on which GPU, the allocator model follows where versions and architectures
// differ. Today one difference is modelled by version: the cuBLAS workspace
// (core/memory/cublas_workspace.h), which PyTorch 2.x allocates through the caching allocator and
// the PyTorch of the forum post (1.x) left outside it, so that torch.cuda.memory_allocated() did
// not count it. The GPU's properties size architecture-dependent buffers: the cuBLAS workspace by
// compute capability, topk's and the reductions' by multiprocessor count
// (core/memory/kernel_temporaries.h, core/memory/reduction_temporaries.h).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace matmulviz {

enum class PyTorchVersion : uint8_t {
  Forum,  ///< "forum": the forum post's PyTorch (1.x): no cuBLAS workspace counted
  V2,     ///< "2.x": PyTorch 2.x: one cuBLAS workspace per thread through the caching allocator
};

/// "forum" or "2.x".
std::string_view pytorchVersionName(PyTorchVersion v);
/// Parses "forum" (also "1.x") or "2.x" (also "2"). Throws std::invalid_argument naming the
/// allowed values.
PyTorchVersion parsePyTorchVersion(std::string_view name);

/// The properties of a GPU that PyTorch's CUDA code reads from cudaDeviceProp to size buffers.
/// Figures are NVIDIA's published ones for each product.
struct GpuArchitecture {
  std::string_view key;             ///< "h200", as --gpu spells it (the cost model's keys)
  std::string_view name;            ///< "NVIDIA H200"
  int computeCapability;            ///< major * 10 + minor: 90 for sm_90
  int multiProcessorCount;          ///< cudaDeviceProp::multiProcessorCount
  int regsPerMultiprocessor;        ///< cudaDeviceProp::regsPerMultiprocessor
  int maxBlocksPerMultiProcessor;   ///< cudaDeviceProp::maxBlocksPerMultiProcessor
  int maxThreadsPerMultiProcessor;  ///< cudaDeviceProp::maxThreadsPerMultiProcessor
};

/// h200 (sm_90, 132 SMs), h100 (sm_90, 132 SMs, SXM), a100 (sm_80, 108 SMs), t4 (sm_75, 40 SMs).
std::span<const GpuArchitecture> gpuArchitectures();
/// The architecture called `key`, or nullptr.
const GpuArchitecture* findGpuArchitecture(std::string_view key);
/// "h200|h100|a100|t4".
std::string gpuArchitectureKeys();

/// The modelled PyTorch and GPU. The default is today's PyTorch on an H200.
struct PyTorchModel {
  PyTorchVersion version = PyTorchVersion::V2;
  std::string gpu = "h200";  ///< a key of gpuArchitectures()
  /// CUBLAS_WORKSPACE_CONFIG as PyTorch reads it (":4096:8", ":0:0"); none: the process's
  /// environment variable of that name, as PyTorch reads it, else the architecture's default.
  std::optional<std::string> cublasWorkspaceConfig;

  /// The architecture of `gpu`. Throws std::invalid_argument for an unknown key.
  const GpuArchitecture& architecture() const;
  /// "PyTorch 2.x on h200 (sm_90)", "the forum post's PyTorch (1.x) on h200 (sm_90)".
  std::string describe() const;
};

/// The model a run gets when nobody chose one: PyTorch 2.x on an H200.
inline PyTorchModel defaultPyTorchModel() {
  return {};
}
/// The forum post's era (the seed's table): no workspace counted.
inline PyTorchModel forumPyTorchModel() {
  PyTorchModel m;
  m.version = PyTorchVersion::Forum;
  return m;
}

}  // namespace matmulviz
