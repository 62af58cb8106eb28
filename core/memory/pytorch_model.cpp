#include "core/memory/pytorch_model.h"

#include <array>
#include <stdexcept>

namespace matmulviz {

std::string_view pytorchVersionName(PyTorchVersion v) {
  return v == PyTorchVersion::Forum ? "forum" : "2.x";
}

PyTorchVersion parsePyTorchVersion(std::string_view name) {
  if (name == "forum" || name == "1.x") return PyTorchVersion::Forum;
  if (name == "2.x" || name == "2") return PyTorchVersion::V2;
  throw std::invalid_argument("pytorch version must be forum or 2.x, got \"" + std::string(name) +
                              "\"");
}

namespace {
// multiProcessorCount from NVIDIA's product pages (H200 and H100 SXM: 132, A100: 108, T4: 40);
// 65536 32-bit registers per SM on all four; at most 32 resident blocks per SM from sm_80 on,
// 16 on sm_75; at most 2048 resident threads per SM on sm_80 and sm_90, 1024 on sm_75 (CUDA C++
// Programming Guide, "Technical Specifications per Compute Capability").
constexpr std::array kArchitectures = {
    GpuArchitecture{"h200", "NVIDIA H200", 90, 132, 65536, 32, 2048},
    GpuArchitecture{"h100", "NVIDIA H100 SXM", 90, 132, 65536, 32, 2048},
    GpuArchitecture{"a100", "NVIDIA A100", 80, 108, 65536, 32, 2048},
    GpuArchitecture{"t4", "NVIDIA T4", 75, 40, 65536, 16, 1024},
};
}  // namespace

std::span<const GpuArchitecture> gpuArchitectures() {
  return kArchitectures;
}

const GpuArchitecture* findGpuArchitecture(std::string_view key) {
  for (const GpuArchitecture& a : kArchitectures)
    if (a.key == key) return &a;
  return nullptr;
}

std::string gpuArchitectureKeys() {
  std::string s;
  for (const GpuArchitecture& a : kArchitectures) s += (s.empty() ? "" : "|") + std::string(a.key);
  return s;
}

const GpuArchitecture& PyTorchModel::architecture() const {
  if (const GpuArchitecture* a = findGpuArchitecture(gpu)) return *a;
  throw std::invalid_argument("gpu must be one of " + gpuArchitectureKeys() + ", got \"" + gpu +
                              "\"");
}

std::string PyTorchModel::describe() const {
  const GpuArchitecture& a = architecture();
  const std::string where =
      " on " + std::string(a.key) + " (sm_" + std::to_string(a.computeCapability) + ")";
  return version == PyTorchVersion::Forum ? "the forum post's PyTorch (1.x)" + where
                                          : "PyTorch 2.x" + where;
}

}  // namespace matmulviz
