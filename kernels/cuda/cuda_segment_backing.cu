#include "kernels/cuda/cuda_segment_backing.h"

#include "kernels/cuda/cuda_check.cuh"

namespace matmulviz::kernels::cuda {

CudaSegmentBacking::CudaSegmentBacking(int device) : device_(device) {
  MATMULVIZ_CUDA_CHECK(cudaSetDevice(device_));
}

void* CudaSegmentBacking::allocate(std::size_t bytes) {
  MATMULVIZ_CUDA_CHECK(cudaSetDevice(device_));
  void* ptr = nullptr;
  const cudaError_t err = cudaMalloc(&ptr, bytes);
  if (err == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // not sticky: clear it so later calls do not see it
    throwCudaOutOfMemory("cudaMalloc", bytes, __FILE__, __LINE__);
  }
  MATMULVIZ_CUDA_CHECK(err);
  return ptr;
}

void CudaSegmentBacking::release(void* ptr, std::size_t) noexcept {
  if (ptr == nullptr) return;
  if (cudaFree(ptr) != cudaSuccess) ++releaseFailures_;
}

}  // namespace matmulviz::kernels::cuda
