#pragma once
// Errors of the CUDA backend: every CUDA runtime and cuBLAS call is checked and a failure is
// thrown with the call, the error name and text, and the file and line (never exit()).

#include <new>
#include <stdexcept>
#include <string>

namespace matmulviz::kernels::cuda {

/// A CUDA runtime or cuBLAS call failed, or the backend is not available.
class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// cudaMalloc reported cudaErrorMemoryAllocation. A std::bad_alloc, as SegmentBacking requires.
class CudaOutOfMemory : public std::bad_alloc {
 public:
  explicit CudaOutOfMemory(std::string message) : message_(std::move(message)) {}
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

/// Throws CudaError "<file>:<line>: <call> failed: <name> (<text>)".
[[noreturn]] void throwCudaError(const char* call, const char* name, const char* text,
                                 const char* file, int line);

/// Throws CudaOutOfMemory with the same message shape and the requested size.
[[noreturn]] void throwCudaOutOfMemory(const char* call, std::size_t bytes, const char* file,
                                       int line);

}  // namespace matmulviz::kernels::cuda
