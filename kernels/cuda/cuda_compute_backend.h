#pragma once
// The engine's primitives (core/tensor/compute_backend.h) on a real CUDA GPU: the kernel bodies
// of kernels/engine/*_kernels.h launched as __global__ functions with the GPU's thread context
// (device_context.cuh), mm/bmm through cuBLAS, transfers through cudaMemcpy. Every tensor's
// memory is a CudaSegmentBacking segment (cudaMalloc); the host never touches it. Work is queued
// on the legacy default stream, so operations run in the order they are issued; synchronize()
// waits for them. Built only with the CUDA toolkit (kernels/CMakeLists.txt); callers make the
// device through cuda_device.h.

#include <string>

#include "core/tensor/compute_backend.h"

struct cublasContext;  // cuBLAS's handle (cublasHandle_t is a cublasContext*)

namespace matmulviz::kernels::cuda {

class CudaComputeBackend final : public ComputeBackend {
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
  /// Device to device: a strided copy kernel (float32 <-> float64 converted, same-dtype copies
  /// of any width). Host to device and device to host (the other side's compute() is null):
  /// cudaMemcpy of contiguous same-dtype tensors only; anything else throws
  /// std::invalid_argument.
  void copy(const Tensor& dst, const Tensor& src) override;
  void fillZero(const Tensor& t) override;
  void addInPlace(const Tensor& a, const Tensor& b) override;
  void mulInPlace(const Tensor& a, const Tensor& b) override;
  void sumInto(const Tensor& out, const Shape& outStrides, const Tensor& t) override;
  /// cublas{S,D}gemmStridedBatched when each operand matrix has unit stride along its rows or
  /// columns (the host BLAS path's rule, core/ops/gemm_kernel.cpp), otherwise the engine's
  /// strided gemm kernel. Plain float32 arithmetic (CUBLAS_DEFAULT_MATH: no TF32).
  void gemm(const Tensor& out, const Tensor& a, const Tensor& b) override;
  void indexRows(const Tensor& out, const Tensor& t, const Tensor& index) override;
  void indexAddRows(const Tensor& out, const Tensor& index, const Tensor& g) override;
  void gatherBmm(const Tensor& out, const Tensor& a, const Tensor& c, const Tensor& q) override;
  void gatherBmmGradA(const Tensor& dA, const Tensor& dO, const Tensor& c,
                      const Tensor& q) override;
  void gatherBmmGradC(const Tensor& dC, const Tensor& a, const Tensor& dO,
                      const Tensor& q) override;
  /// cudaDeviceSynchronize; throws CudaError for a failure of the queued work.
  void synchronize() override;

  int device() const { return device_; }

 private:
  /// Makes device_ current (cudaSetDevice); throws CudaError.
  void select() const;
  /// The cuBLAS handle, created (with CUBLAS_DEFAULT_MATH) on first use; throws CudaError.
  cublasContext* cublas();

  int device_;
  cublasContext* cublas_ = nullptr;
};

}  // namespace matmulviz::kernels::cuda
