#pragma once
// The engine's primitives on a CUDA GPU. What each primitive checks and launches is
// EngineBackend's (kernels/engine/engine_backend.h), shared with the simulated device; this
// class supplies the GPU's launch (one __global__ template over the engine's kernel bodies),
// cudaMemcpy transfers, cudaMemsetAsync zero fills and cuBLAS for gemm. Only nvcc compiles it.

#include <cstdint>
#include <string>

#include "core/sim/launch_config.h"
#include "kernels/engine/engine_backend.h"

struct cublasContext;  // cuBLAS's handle (cublasHandle_t is a cublasContext*)

namespace matmulviz::kernels::cuda {

class CudaComputeBackend final : public engine::EngineBackend<CudaComputeBackend> {
 public:
  /// Computes on CUDA device `device` (the one whose memory the tensors live in). Selects it;
  /// throws CudaError when it cannot be selected. The cuBLAS handle is created by the first
  /// gemm.
  explicit CudaComputeBackend(int device = 0);
  /// Destroys the cuBLAS handle; never throws.
  ~CudaComputeBackend() override;
  CudaComputeBackend(const CudaComputeBackend&) = delete;
  CudaComputeBackend& operator=(const CudaComputeBackend&) = delete;

  std::string name() const override { return "cuda"; }
  /// cudaDeviceSynchronize; throws CudaError for a failure of the queued work.
  void synchronize() override;

  int device() const { return device_; }

  // EngineBackend's launch hooks.
  /// Op's body on blocks x kEngineBlock GPU threads; throws CudaError when the launch fails.
  template <class Op, class Args>
  void launch(unsigned blocks, const Args& args);
  /// Op's body on the config's grid and blocks with its dynamic shared memory (kernel 08).
  template <class Op, class Args>
  void launchShaped(const sim::LaunchConfig& config, const Args& args);
  /// cudaMemcpy of `bytes` between host memory and the device; throws CudaError.
  void transfer(const Tensor& dst, const Tensor& src, std::int64_t bytes, bool toDevice);
  /// cudaMemsetAsync of t's bytes; throws CudaError.
  void zeroBytes(const Tensor& t);
  /// cublas{S,D}gemmStridedBatched when each operand matrix has unit stride along its rows or
  /// columns (the host BLAS path's rule, core/ops/gemm_kernel.cpp) and every size fits an int;
  /// false otherwise (the engine's strided gemm kernel runs). Plain float32 arithmetic
  /// (CUBLAS_DEFAULT_MATH: no TF32).
  bool gemmNative(const Tensor& out, const Tensor& a, const Tensor& b);

 private:
  /// Makes device_ current (cudaSetDevice); throws CudaError.
  void select() const;
  /// The cuBLAS handle, created (with CUBLAS_DEFAULT_MATH) on first use; throws CudaError.
  cublasContext* cublas();

  int device_;
  cublasContext* cublas_ = nullptr;
};

}  // namespace matmulviz::kernels::cuda

extern template class matmulviz::kernels::engine::EngineBackend<
    matmulviz::kernels::cuda::CudaComputeBackend>;
