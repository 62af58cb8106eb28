// calibrateGpu: timed launches, copies and one sgemm on the device (see calibrate.h).
#include "kernels/cuda/calibrate.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_probe.h"
#include "kernels/cuda/device_buffer.cuh"

namespace matmulviz::kernels::cuda {
namespace {

__global__ void emptyKernel() {}

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// Host wall time per launch of back-to-back empty kernels (what a launch costs the host and the
/// device's queue), the median of 5 rounds of 2000.
double launchLatencyS() {
  emptyKernel<<<1, 1>>>();
  MATMULVIZ_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<double> rounds;
  for (int r = 0; r < 5; ++r) {
    const auto t0 = Clock::now();
    for (int i = 0; i < 2000; ++i) emptyKernel<<<1, 1>>>();
    MATMULVIZ_CUDA_CHECK(cudaGetLastError());
    MATMULVIZ_CUDA_CHECK(cudaDeviceSynchronize());
    rounds.push_back(secondsSince(t0) / 2000);
  }
  return median(rounds);
}

/// Bytes read plus written per second by a device-to-device copy of `bytes`, best of 10.
double copyBandwidth(std::size_t bytes) {
  DeviceBuffer<char> from(bytes), to(bytes);
  MATMULVIZ_CUDA_CHECK(cudaMemset(from.get(), 1, bytes));
  EventTimer timer;
  double best = 0;
  for (int r = 0; r < 10; ++r) {
    timer.start();
    MATMULVIZ_CUDA_CHECK(cudaMemcpy(to.get(), from.get(), bytes, cudaMemcpyDeviceToDevice));
    const double s = timer.stopMs() / 1e3;
    if (s > 0) best = std::max(best, 2.0 * static_cast<double>(bytes) / s);
  }
  return best;
}

/// FLOP/s of cuBLAS sgemm n x n x n (CUBLAS_DEFAULT_MATH: no TF32), median of 10 after a warm-up.
double sgemmRate(int n) {
  cublasHandle_t handle = nullptr;
  MATMULVIZ_CUBLAS_CHECK(cublasCreate(&handle));
  struct Guard {
    cublasHandle_t h;
    ~Guard() { cublasDestroy(h); }
  } guard{handle};
  MATMULVIZ_CUBLAS_CHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
  const std::size_t elements = static_cast<std::size_t>(n) * n;
  DeviceBuffer<float> a(elements), b(elements), c(elements);
  MATMULVIZ_CUDA_CHECK(cudaMemset(a.get(), 0, elements * sizeof(float)));
  MATMULVIZ_CUDA_CHECK(cudaMemset(b.get(), 0, elements * sizeof(float)));
  const float alpha = 1.f, beta = 0.f;
  const auto gemm = [&] {
    MATMULVIZ_CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, b.get(),
                                       n, a.get(), n, &beta, c.get(), n));
  };
  gemm();
  MATMULVIZ_CUDA_CHECK(cudaDeviceSynchronize());
  EventTimer timer;
  std::vector<double> s;
  for (int r = 0; r < 10; ++r) {
    timer.start();
    gemm();
    s.push_back(timer.stopMs() / 1e3);
  }
  return 2.0 * n * static_cast<double>(n) * n / median(s);
}

/// Pageable host memory to the device: bytes per second for `bytes`, and the wall time of a
/// small blocking copy (as PyTorch's copy of a CPU index makes).
void hostToDevice(std::size_t bytes, double& bytesPerS, double& smallCopyS) {
  std::vector<char> host(bytes, 1);
  DeviceBuffer<char> device(bytes);
  MATMULVIZ_CUDA_CHECK(cudaMemcpy(device.get(), host.data(), bytes, cudaMemcpyHostToDevice));
  std::vector<double> big;
  for (int r = 0; r < 5; ++r) {
    const auto t0 = Clock::now();
    MATMULVIZ_CUDA_CHECK(cudaMemcpy(device.get(), host.data(), bytes, cudaMemcpyHostToDevice));
    big.push_back(secondsSince(t0));
  }
  bytesPerS = static_cast<double>(bytes) / median(big);
  std::vector<double> small;
  for (int r = 0; r < 200; ++r) {
    const auto t0 = Clock::now();
    MATMULVIZ_CUDA_CHECK(cudaMemcpy(device.get(), host.data(), 2048, cudaMemcpyHostToDevice));
    small.push_back(secondsSince(t0));
  }
  smallCopyS = median(small);
}

int attribute(cudaDeviceAttr what, int device) {
  int v = 0;
  MATMULVIZ_CUDA_CHECK(cudaDeviceGetAttribute(&v, what, device));
  return v;
}

}  // namespace

Calibration calibrateGpu(int device) {
  const CudaStatus status = probeCuda();
  if (!status.available) throw CudaError("CUDA is not available: " + status.reason);
  MATMULVIZ_CUDA_CHECK(cudaSetDevice(device));
  Calibration c;
  costmodel::GpuProfile& p = c.profile;
  const int major = attribute(cudaDevAttrComputeCapabilityMajor, device);
  const int minor = attribute(cudaDevAttrComputeCapabilityMinor, device);
  const int sms = attribute(cudaDevAttrMultiProcessorCount, device);
  const int clockKHz = attribute(cudaDevAttrClockRate, device);
  cudaDeviceProp prop{};
  MATMULVIZ_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  p.key = "calibrated";
  p.name = std::string(prop.name) + " (calibrated)";
  p.computeCapability = major * 10 + minor;
  p.launchLatencyS = launchLatencyS();
  p.bandwidthBytesPerS = copyBandwidth(std::size_t{512} << 20);
  p.sgemmFlopsPerS = sgemmRate(4096);
  p.float32FlopsPerS = p.sgemmFlopsPerS;
  p.onChipBytesPerS = static_cast<double>(sms) * 128.0 * clockKHz * 1e3;
  double smallCopyS = 0;
  hostToDevice(std::size_t{64} << 20, p.hostToDeviceBytesPerS, smallCopyS);
  // PyTorch's copy of a CPU index adds its own host work to the bare copy: what the H200
  // showed beyond a bare copy is not measured here, so the larger of the two is kept.
  p.blockingCopyS = std::max(smallCopyS, costmodel::findGpuProfile("h200")->blockingCopyS);
  p.hostOpS = costmodel::findGpuProfile("h200")->hostOpS;
  p.source =
      "calibrated with matmulviz-cli calibrate on this GPU; host terms of PyTorch as "
      "measured with an H200";
  c.device = prop.name;
  c.sms = sms;
  c.clockKHz = clockKHz;
  c.smallCopyS = smallCopyS;
  return c;
}

}  // namespace matmulviz::kernels::cuda
