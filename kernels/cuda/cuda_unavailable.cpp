// Built instead of the .cu files when the CUDA toolkit was not found at configure time: the
// CUDA backend's functions exist and throw CudaError saying why.
#include "kernels/cuda/calibrate.h"
#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/cuda_error.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/cuda_segment_backing.h"

namespace matmulviz::kernels::cuda {
namespace {

[[noreturn]] void unavailable() {
  throw CudaError(
      "this build has no CUDA backend: no CUDA toolkit (nvcc) was found at configure time, or "
      "MATMULVIZ_CUDA=OFF");
}

}  // namespace

CudaRun runKernel(std::string_view, const MatmulProblem&, int, const MatmulInputs&, int) {
  unavailable();
}

CudaRun runCublas(const MatmulProblem&, CublasMode, const MatmulInputs&, int) {
  unavailable();
}

const char* toString(CublasMode mode) {
  switch (mode) {
    case CublasMode::Gemm:
      return "gemm";
    case CublasMode::StridedBatched:
      return "strided_batched";
    case CublasMode::GatherPointers:
      return "gather_pointers";
  }
  return "unknown";
}

CudaSegmentBacking::CudaSegmentBacking(int device) : device_(device) {
  unavailable();
}
void* CudaSegmentBacking::allocate(std::size_t) {
  unavailable();
}
void CudaSegmentBacking::release(void*, std::size_t) noexcept {}

DevicePtr makeCudaDevice(CachingAllocator::Options, int) {
  // Worded as the CUDA build's "no device answers", which callers and tests look for.
  throw CudaError(
      "CUDA is not available: this build has no CUDA backend (no CUDA toolkit was found at "
      "configure time, or MATMULVIZ_CUDA=OFF)");
}

Calibration calibrateGpu(int) {
  throw CudaError(
      "CUDA is not available: this build has no CUDA backend (no CUDA toolkit was found at "
      "configure time, or MATMULVIZ_CUDA=OFF)");
}

}  // namespace matmulviz::kernels::cuda
