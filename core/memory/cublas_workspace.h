#pragma once
// The cuBLAS workspace as PyTorch 2.x keeps it (aten/src/ATen/cuda/CublasHandlePool.cpp):
// - getCurrentCUDABlasHandle() gives each thread its own cuBLAS handle, and
//   setWorkspaceForHandle() looks up a workspace by (handle, stream); the first lookup allocates
//   one through the CUDA caching allocator (getNewWorkspace) and keeps it in a process-wide map,
//   so it is never freed, and torch.cuda.empty_cache() cannot release its segment.
// - Every op that calls cuBLAS asks for the handle just before the library call, after its
//   output and any operand copies exist: mm, bmm, dot, mv and the matmuls built on them.
// - PyTorch's autograd engine runs a CUDA backward on its own device thread: the first backward
//   that calls cuBLAS allocates a second workspace, the autograd thread's.
// - The size (parseChosenWorkspaceSize): CUBLAS_WORKSPACE_CONFIG, a list of ":SIZE:COUNT" pairs,
//   gives the sum of SIZE KiB x COUNT; unset (or without a pair) it is 32 MiB on compute
//   capability 9.0 (":4096:8") and 4096 KiB x 2 + 16 KiB x 8 = 8320 KiB on the others. A size of
//   0 allocates nothing (the caching allocator hands out no block for 0 bytes).
// - cuBLASLt, which addmm with a bias vector calls (gemm_and_bias), has a workspace of its own
//   (getCUDABlasLtWorkspace): one per thread's handle and stream, allocated through the caching
//   allocator by the first cuBLASLt call, after the thread's cuBLAS handle (getCurrentCUDABlasLt-
//   Handle is the cuBLAS handle, whose first use allocates the cuBLAS workspace), and kept;
//   CUBLASLT_WORKSPACE_SIZE KiB, default 1024 KiB (parseCUDABlasLtWorkspaceSize). Measured: the
//   H200's transformer snapshot allocates this 1 MiB at the first linear with a 2-d input.
// The forum post's PyTorch (1.x) did not allocate the workspace through the caching allocator,
// so with PyTorchVersion::Forum nothing is counted.
// The simulator and the PyTorch dispatch adapter call useCublasHandle(); nothing else decides.

#include "core/memory/caching_allocator.h"
#include "core/memory/pytorch_model.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace matmulviz {

/// Bytes of one cuBLAS workspace on a GPU of `computeCapability` (major * 10 + minor) under
/// CUBLAS_WORKSPACE_CONFIG `config` (none: unset). Never throws; a config without any
/// ":SIZE:COUNT" pair gives the default, as PyTorch does (with a warning there).
int64_t cublasWorkspaceBytes(int computeCapability, std::optional<std::string_view> config);

/// The CUBLAS_WORKSPACE_CONFIG in effect for `model`: its own when set, else the process's
/// environment variable, else none.
std::optional<std::string> effectiveCublasWorkspaceConfig(const PyTorchModel& model);

/// The thread a CUDA op runs on in PyTorch: the Python (main) thread, or the autograd engine's
/// device thread during a backward.
enum class CudaThread : uint8_t { Main, Autograd };
constexpr int kCudaThreadCount = 2;
/// "main thread", "autograd thread".
std::string_view cudaThreadName(CudaThread t);
/// The thread the engine is modelling now (Main outside a backward).
CudaThread currentCudaThread();

/// Marks the code in its scope as running on the autograd engine's thread (core/autograd's
/// backward). Nests; restores the previous thread on exit.
class AutogradThreadScope {
 public:
  AutogradThreadScope();
  ~AutogradThreadScope();
  AutogradThreadScope(const AutogradThreadScope&) = delete;
  AutogradThreadScope& operator=(const AutogradThreadScope&) = delete;

 private:
  CudaThread previous_;
};

/// What an op that calls cuBLAS does to the caching allocator before the call: under PyTorch 2.x,
/// the first call on the current thread allocates that thread's workspace (label "cuBLAS
/// workspace of the autograd thread", category CublasWorkspace, never freed); later calls and
/// the forum era allocate nothing. Returns the workspace's allocation id, or -1 when there is
/// none. Throws OutOfMemoryError as any allocation; std::invalid_argument for an unknown GPU.
int64_t useCublasHandle(CachingAllocator& allocator);

/// Bytes of one cuBLASLt workspace under CUBLASLT_WORKSPACE_SIZE `kib` (none: unset): that many
/// KiB, 1024 KiB when unset or not a number. Never throws.
int64_t cublasLtWorkspaceBytes(std::optional<std::string_view> kib);

/// Whether addmm(self, mat1, mat2, beta) runs on cuBLASLt (aten/src/ATen/native/cuda/Blas.cpp,
/// addmm_out_cuda_impl: useLtInterface, CUDA 12.1 and later): beta 1, a contiguous 1-d self of
/// mat2's column count, a contiguous 2-d result, a floating dtype of 16, 32 or 64 bits, and mat2
/// of more than one row and column. `mat1Rows` and the sizes are mat1's and mat2's.
bool addmmUsesCublasLt(int selfDims, int64_t selfSize, bool selfContiguous, bool resultContiguous,
                       double beta, bool floatingDtype, int64_t mat2Rows, int64_t mat2Cols);

/// What a cuBLASLt call does to the caching allocator first: useCublasHandle(), then, under
/// PyTorch 2.x, the first call on the current thread allocates that thread's cuBLASLt workspace
/// (label "cuBLASLt workspace of the main thread", category CublasWorkspace, never freed).
/// Returns the cuBLASLt workspace's allocation id, or -1. Throws as useCublasHandle().
int64_t useCublasLtHandle(CachingAllocator& allocator);

/// "cuBLAS workspace of the autograd thread, 32 MiB, kept for the life of the process".
std::string cublasWorkspaceDescription(CudaThread thread, int64_t bytes);

}  // namespace matmulviz
