#pragma once
// Measures what the cost model needs on this machine's GPU (`matmulviz-cli calibrate`), so that a
// user's own GPU gets its own predictions: a profile (core/costmodel/profile_file.h) and what was
// measured, for people.

#include <string>

#include "core/costmodel/cost_model.h"

namespace matmulviz::kernels::cuda {

struct Calibration {
  costmodel::GpuProfile profile;
  std::string device;     ///< cudaDeviceProp::name
  int sms = 0;            ///< multiprocessors
  int clockKHz = 0;       ///< SM clock, kHz (cudaDevAttrClockRate)
  double smallCopyS = 0;  ///< one blocking 2 KiB copy from pageable memory, seconds
};

/// On CUDA device `device` (0-based): launch latency (back-to-back launches of an empty kernel,
/// host wall time per launch), copy bandwidth (a 512 MiB device-to-device cudaMemcpy, bytes read
/// plus written per second, CUDA events, best of 10), the sgemm rate (cuBLAS sgemm 4096^3, plain
/// float32, median of 10), pageable host-to-device bandwidth (64 MiB), a blocking copy's latency
/// (2 KiB from pageable memory, median of 200) and, from the device's attributes, the compute
/// capability and the on-chip bandwidth (SMs x 128 bytes x clock). The float32 peak is taken as
/// the sgemm rate; PyTorch's per-op host cost is not measured here (kept at 6 us, the H200
/// machine's). Takes a few seconds. Throws CudaError "CUDA is not available: ..." when no device
/// answers or the build has no CUDA backend, CudaError for a failing call.
Calibration calibrateGpu(int device = 0);

}  // namespace matmulviz::kernels::cuda
