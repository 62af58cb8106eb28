#include "kernels/cuda/cuda_error.h"

#include <string>

namespace matmulviz::kernels::cuda {

void throwCudaError(const char* call, const char* name, const char* text, const char* file,
                    int line) {
  throw CudaError(std::string(file) + ":" + std::to_string(line) + ": " + call +
                  " failed: " + name + " (" + text + ")");
}

void throwCudaOutOfMemory(const char* call, std::size_t bytes, const char* file, int line) {
  throw CudaOutOfMemory(std::string(file) + ":" + std::to_string(line) + ": " + call +
                        " could not allocate " + std::to_string(bytes) +
                        " bytes on the device (cudaErrorMemoryAllocation)");
}

}  // namespace matmulviz::kernels::cuda
