#pragma once
// Owning device memory and CUDA events for the launchers; every call checked. .cu files only.

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_check.cuh"

namespace matmulviz::kernels::cuda {

/// `count` elements of T in device memory (cudaMalloc), freed on destruction.
template <class T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count_ == 0) return;
    const cudaError_t err = cudaMalloc(&data_, count_ * sizeof(T));
    if (err == cudaErrorMemoryAllocation) {
      cudaGetLastError();  // clear it
      throwCudaOutOfMemory("cudaMalloc", count_ * sizeof(T), __FILE__, __LINE__);
    }
    MATMULVIZ_CUDA_CHECK(err);
  }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) {
    if (count_ != 0) {
      MATMULVIZ_CUDA_CHECK(
          cudaMemcpy(data_, host.data(), count_ * sizeof(T), cudaMemcpyHostToDevice));
    }
  }
  ~DeviceBuffer() {
    if (data_ != nullptr) cudaFree(data_);  // a failure here cannot be thrown; it resurfaces
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* get() const { return data_; }
  std::size_t size() const { return count_; }

  std::vector<T> toHost() const {
    std::vector<T> host(count_);
    if (count_ != 0) {
      MATMULVIZ_CUDA_CHECK(
          cudaMemcpy(host.data(), data_, count_ * sizeof(T), cudaMemcpyDeviceToHost));
    }
    return host;
  }

 private:
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

/// A pair of CUDA events around work on the default stream: elapsed milliseconds.
class EventTimer {
 public:
  EventTimer() {
    MATMULVIZ_CUDA_CHECK(cudaEventCreate(&start_));
    const cudaError_t err = cudaEventCreate(&stop_);
    if (err != cudaSuccess) cudaEventDestroy(start_);
    MATMULVIZ_CUDA_CHECK(err);
  }
  ~EventTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  void start() { MATMULVIZ_CUDA_CHECK(cudaEventRecord(start_)); }
  /// Records the stop event, waits for it and returns the milliseconds since start().
  float stopMs() {
    MATMULVIZ_CUDA_CHECK(cudaEventRecord(stop_));
    MATMULVIZ_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    MATMULVIZ_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms;
  }

 private:
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

/// Median and minimum of `samples` (not empty), sorted in place.
inline void medianMin(std::vector<double>& samples, double& median, double& min) {
  std::sort(samples.begin(), samples.end());
  median = samples[samples.size() / 2];
  min = samples.front();
}

/// "NVIDIA H100 80GB HBM3 (sm_90)" for the current device.
inline std::string currentDeviceName() {
  int device = 0;
  MATMULVIZ_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  MATMULVIZ_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  return std::string(prop.name) + " (sm_" + std::to_string(prop.major) +
         std::to_string(prop.minor) + ")";
}

}  // namespace matmulviz::kernels::cuda
