#pragma once
// Checks for every CUDA runtime and cuBLAS call: a failure throws (cuda_error.h) with the call,
// the error's name and text, file and line. Only .cu files include this.

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "kernels/cuda/cuda_error.h"

#define MATMULVIZ_CUDA_CHECK(call)                                                           \
  do {                                                                                       \
    const cudaError_t matmulvizErr = (call);                                                 \
    if (matmulvizErr != cudaSuccess) {                                                       \
      ::matmulviz::kernels::cuda::throwCudaError(#call, cudaGetErrorName(matmulvizErr),      \
                                                 cudaGetErrorString(matmulvizErr), __FILE__, \
                                                 __LINE__);                                  \
    }                                                                                        \
  } while (0)

#define MATMULVIZ_CUBLAS_CHECK(call)                                                               \
  do {                                                                                             \
    const cublasStatus_t matmulvizStatus = (call);                                                 \
    if (matmulvizStatus != CUBLAS_STATUS_SUCCESS) {                                                \
      ::matmulviz::kernels::cuda::throwCudaError(#call, cublasGetStatusName(matmulvizStatus),      \
                                                 cublasGetStatusString(matmulvizStatus), __FILE__, \
                                                 __LINE__);                                        \
    }                                                                                              \
  } while (0)
