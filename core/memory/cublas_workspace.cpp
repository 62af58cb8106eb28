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

int64_t cublasLtWorkspaceBytes(std::optional<std::string_view> kib) {
  constexpr int64_t defaultKib = 1024;
  if (!kib) return defaultKib * 1024;
  try {  // std::stoi, as parseCUDABlasLtWorkspaceSize: a leading number, else the default
    return static_cast<int64_t>(std::stoi(std::string(*kib))) * 1024;
  } catch (const std::exception&) {
    return defaultKib * 1024;
  }
}

bool addmmUsesCublasLt(int selfDims, int64_t selfSize, bool selfContiguous, bool resultContiguous,
                       double beta, bool floatingDtype, int64_t mat2Rows, int64_t mat2Cols) {
  return beta == 1.0 && selfDims == 1 && selfSize == mat2Cols && selfContiguous &&
         resultContiguous && floatingDtype && mat2Rows > 1 && mat2Cols > 1;
}

namespace {

/// The workspace kept in slot `slot` of `allocator` (a thread's cuBLAS or cuBLASLt workspace):
/// allocated under `name` of the current thread on first use, -1 for none.
int64_t keptWorkspace(CachingAllocator& allocator, int slot, const std::string& name,
                      int64_t bytes) {
  if (auto id = allocator.cublasWorkspace(slot)) return *id;
  if (bytes == 0) {  // allocate(0) hands out no block
    allocator.setCublasWorkspace(slot, -1);
    return -1;
  }
  const CudaThread thread = currentCudaThread();
  std::string label = name + " of the " + std::string(cudaThreadName(thread));
  if (allocator.currentStream() != 0)  // one per (handle, stream): a side stream has its own
    label += " on stream " + std::to_string(allocator.currentStream());
  const MemoryCategory previous = allocator.setDefaultCategory(MemoryCategory::CublasWorkspace);
  CachingAllocator::Allocation a;
  try {
    a = allocator.allocate(bytes, label);
  } catch (...) {
    allocator.setDefaultCategory(previous);
    throw;
  }
  allocator.setDefaultCategory(previous);
  allocator.setCublasWorkspace(slot, a.id);
  allocator.notifyHolder(
      a.id, label + ", " + formatBytes(bytes) + ", kept for the life of the process", +1);
  return a.id;
}

}  // namespace

int64_t useCublasHandle(CachingAllocator& allocator) {
  const PyTorchModel& model = allocator.options().pytorch;
  if (model.version == PyTorchVersion::Forum) return -1;
  const int slot = static_cast<int>(currentCudaThread());
  if (auto id = allocator.cublasWorkspace(slot)) return *id;
  const auto config = effectiveCublasWorkspaceConfig(model);
  const int64_t bytes =
      cublasWorkspaceBytes(model.architecture().computeCapability,
                           config ? std::optional<std::string_view>(*config) : std::nullopt);
  return keptWorkspace(allocator, slot, "cuBLAS workspace", bytes);
}

int64_t useCublasLtHandle(CachingAllocator& allocator) {
  useCublasHandle(allocator);
  if (allocator.options().pytorch.version == PyTorchVersion::Forum) return -1;
  // The cuBLASLt slots follow the cuBLAS ones (caching_allocator.h: cublasWorkspace).
  const int slot = kCudaThreadCount + static_cast<int>(currentCudaThread());
  if (auto id = allocator.cublasWorkspace(slot)) return *id;
  const char* env = std::getenv("CUBLASLT_WORKSPACE_SIZE");
  const int64_t bytes =
      cublasLtWorkspaceBytes(env ? std::optional<std::string_view>(env) : std::nullopt);
  return keptWorkspace(allocator, slot, "cuBLASLt workspace", bytes);
}

}  // namespace matmulviz
