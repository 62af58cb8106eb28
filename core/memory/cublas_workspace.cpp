#include "core/memory/cublas_workspace.h"

#include <cstdlib>
#include <regex>

namespace matmulviz {

int64_t cublasWorkspaceBytes(int computeCapability, std::optional<std::string_view> config) {
  const int64_t defaultBytes =
      computeCapability == 90 ? int64_t{4096} * 1024 * 8 : int64_t{4096} * 1024 * 2 + 16 * 1024 * 8;
  if (!config) return defaultBytes;
  const std::string text(*config);
  static const std::regex pair(":([0-9]+):([0-9]+)");
  int64_t total = 0;
  bool any = false;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), pair); it != std::sregex_iterator();
       ++it) {
    any = true;
    try {
      total += static_cast<int64_t>(std::stoull((*it)[1].str())) * 1024 *
               static_cast<int64_t>(std::stoull((*it)[2].str()));
    } catch (const std::out_of_range&) {
      return defaultBytes;
    }
  }
  return any ? total : defaultBytes;
}

std::optional<std::string> effectiveCublasWorkspaceConfig(const PyTorchModel& model) {
  if (model.cublasWorkspaceConfig) return model.cublasWorkspaceConfig;
  if (const char* env = std::getenv("CUBLAS_WORKSPACE_CONFIG")) return std::string(env);
  return std::nullopt;
}

std::string_view cudaThreadName(CudaThread t) {
  return t == CudaThread::Main ? "main thread" : "autograd thread";
}

namespace {
thread_local CudaThread currentThread = CudaThread::Main;
}

CudaThread currentCudaThread() {
  return currentThread;
}

AutogradThreadScope::AutogradThreadScope() : previous_(currentThread) {
  currentThread = CudaThread::Autograd;
}
AutogradThreadScope::~AutogradThreadScope() {
  currentThread = previous_;
}

std::string cublasWorkspaceDescription(CudaThread thread, int64_t bytes) {
  return "cuBLAS workspace of the " + std::string(cudaThreadName(thread)) + ", " +
         formatBytes(bytes) + ", kept for the life of the process";
}

int64_t useCublasHandle(CachingAllocator& allocator) {
  const PyTorchModel& model = allocator.options().pytorch;
  if (model.version == PyTorchVersion::Forum) return -1;
  const CudaThread thread = currentCudaThread();
  if (auto id = allocator.cublasWorkspace(static_cast<int>(thread))) return *id;
  const auto config = effectiveCublasWorkspaceConfig(model);
  const int64_t bytes =
      cublasWorkspaceBytes(model.architecture().computeCapability,
                           config ? std::optional<std::string_view>(*config) : std::nullopt);
  if (bytes == 0) {  // allocate(0) hands out no block
    allocator.setCublasWorkspace(static_cast<int>(thread), -1);
    return -1;
  }
  const MemoryCategory previous = allocator.setDefaultCategory(MemoryCategory::CublasWorkspace);
  CachingAllocator::Allocation a;
  try {
    a = allocator.allocate(bytes, "cuBLAS workspace of the " + std::string(cudaThreadName(thread)));
  } catch (...) {
    allocator.setDefaultCategory(previous);
    throw;
  }
  allocator.setDefaultCategory(previous);
  allocator.setCublasWorkspace(static_cast<int>(thread), a.id);
  allocator.notifyHolder(a.id, cublasWorkspaceDescription(thread, bytes), +1);
  return a.id;
}

}  // namespace matmulviz
