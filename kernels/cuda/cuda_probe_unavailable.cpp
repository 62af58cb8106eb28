// Built instead of cuda_probe.cu when the CUDA toolkit was not found at configure time.
#include "kernels/cuda/cuda_probe.h"

namespace matmulviz::kernels {

CudaStatus probeCuda() {
  CudaStatus status;
  status.reason =
      "this build has no CUDA backend: no CUDA toolkit (nvcc) was found at configure time, or "
      "MATMULVIZ_CUDA=OFF";
  return status;
}

}  // namespace matmulviz::kernels
