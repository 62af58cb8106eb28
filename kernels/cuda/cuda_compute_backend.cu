// The engine's primitives on a GPU: EngineBackend (kernels/engine/engine_backend.h) checks the
// arguments, builds the kernels' arguments and the grid once for every device; this file only
// launches: one __global__ template builds the GPU's thread context and calls the same body the
// simulated device runs (kernels/engine/engine_ops.h). mm/bmm go to cuBLAS when the operands'
// layouts allow: row-major out = a @ b is computed as column-major out^T = b^T @ a^T, each operand
// passed as stored (op N for a row-major matrix, op T for a column-major one).
#include "kernels/cuda/cuda_compute_backend.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/device_context.cuh"
#include "kernels/engine/engine_backend_impl.h"

namespace matmulviz::kernels::cuda {
namespace {

/// Every engine kernel on the GPU: the thread context of the builtins, then Op's body.
template <class Op, class Args>
__global__ void engineGlobal(Args args) {
  DeviceContext ctx;
  Op::run(ctx, args);
}

/// How BLAS sees one row-major [rows, cols] operand matrix with the given strides (elements):
/// the rule of the host path (core/ops/gemm_kernel.cpp layoutOf / blasCompatible). Row-major:
/// unit column stride and row stride >= cols; column-major (BLAS transposes it): unit row
/// stride and column stride >= rows. A dim of size 1 matches any stride.
struct BlasOperand {
  bool ok = false;     ///< one of the two layouts
  bool trans = false;  ///< column-major
  std::int64_t ld = 1;
};

BlasOperand blasOperand(std::int64_t rows, std::int64_t cols, std::int64_t rowStride,
                        std::int64_t colStride) {
  if ((colStride == 1 || cols == 1) && (rows == 1 || rowStride >= std::max<std::int64_t>(1, cols)))
    return {true, false, rows == 1 ? std::max<std::int64_t>(1, cols) : rowStride};
  if ((rowStride == 1 || rows == 1) && (cols == 1 || colStride >= std::max<std::int64_t>(1, rows)))
    return {true, true, cols == 1 ? std::max<std::int64_t>(1, rows) : colStride};
  return {};
}

bool fitsInt(std::int64_t v) {
  return v >= 0 && v <= std::numeric_limits<int>::max();
}

}  // namespace

CudaComputeBackend::CudaComputeBackend(int device) : device_(device) {
  select();
}

CudaComputeBackend::~CudaComputeBackend() {
  if (cublas_ == nullptr) return;
  (void)cudaSetDevice(device_);  // the handle's device; a failure here cannot be reported
  (void)cublasDestroy(cublas_);
}

void CudaComputeBackend::select() const {
  MATMULVIZ_CUDA_CHECK(cudaSetDevice(device_));
}

cublasContext* CudaComputeBackend::cublas() {
  if (cublas_ == nullptr) {
    cublasHandle_t handle = nullptr;
    MATMULVIZ_CUBLAS_CHECK(cublasCreate(&handle));
    // Plain float32 arithmetic: no TF32 tensor cores, so the numbers match the host BLAS path.
    const cublasStatus_t status = cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH);
    if (status != CUBLAS_STATUS_SUCCESS) cublasDestroy(handle);
    MATMULVIZ_CUBLAS_CHECK(status);
    cublas_ = handle;
  }
  return cublas_;
}

template <class Op, class Args>
void CudaComputeBackend::launch(unsigned blocks, const Args& args) {
  select();
  engineGlobal<Op, Args><<<blocks, engine::kEngineBlock>>>(args);
  MATMULVIZ_CUDA_CHECK(cudaGetLastError());
}

template <class Op, class Args>
void CudaComputeBackend::launchShaped(const sim::LaunchConfig& config, const Args& args) {
  select();
  const dim3 grid(config.gridDim.x, config.gridDim.y, config.gridDim.z);
  const dim3 block(config.blockDim.x, config.blockDim.y, config.blockDim.z);
  engineGlobal<Op, Args><<<grid, block, config.sharedBytes>>>(args);
  MATMULVIZ_CUDA_CHECK(cudaGetLastError());
}

void CudaComputeBackend::transfer(const Tensor& dst, const Tensor& src, std::int64_t bytes,
                                  bool toDevice) {
  select();
  MATMULVIZ_CUDA_CHECK(cudaMemcpy(dst.dataPtr(), src.dataPtr(), static_cast<std::size_t>(bytes),
                                  toDevice ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost));
}

void CudaComputeBackend::zeroBytes(const Tensor& t) {
  select();
  MATMULVIZ_CUDA_CHECK(cudaMemsetAsync(t.dataPtr(), 0, static_cast<std::size_t>(t.nbytes())));
}

bool CudaComputeBackend::gemmNative(const Tensor& out, const Tensor& a, const Tensor& b) {
  const std::int64_t B = a.size(0), n = a.size(1), m = a.size(2), p = b.size(2);
  bool done = false;
  engine::dispatchArithmetic(out.dtype(), "matmul", [&](auto tag) {
    using T = decltype(tag);
    const BlasOperand la = blasOperand(n, m, a.stride(1), a.stride(2));
    const BlasOperand lb = blasOperand(m, p, b.stride(1), b.stride(2));
    const bool blas = la.ok && lb.ok && fitsInt(B) && fitsInt(n) && fitsInt(m) && fitsInt(p) &&
                      fitsInt(la.ld) && fitsInt(lb.ld) && a.stride(0) >= 0 && b.stride(0) >= 0;
    if (!blas) return;
    select();
    // Column-major out^T [p, n] (ld p) = b^T [p, m] @ a^T [m, n]. A row-major operand is its
    // transpose in column-major storage (op N); a column-major one is itself (op T).
    const T alpha = 1;
    const T beta = 0;
    const cublasOperation_t opB = lb.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t opA = la.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
    const auto* pa = static_cast<const T*>(a.dataPtr());
    const auto* pb = static_cast<const T*>(b.dataPtr());
    auto* po = static_cast<T*>(out.dataPtr());
    const long long strideA = a.stride(0), strideB = b.stride(0), strideOut = n * p;
    if constexpr (std::is_same_v<T, float>) {
      MATMULVIZ_CUBLAS_CHECK(cublasSgemmStridedBatched(
          cublas(), opB, opA, static_cast<int>(p), static_cast<int>(n), static_cast<int>(m), &alpha,
          pb, static_cast<int>(lb.ld), strideB, pa, static_cast<int>(la.ld), strideA, &beta, po,
          static_cast<int>(p), strideOut, static_cast<int>(B)));
    } else {
      MATMULVIZ_CUBLAS_CHECK(cublasDgemmStridedBatched(
          cublas(), opB, opA, static_cast<int>(p), static_cast<int>(n), static_cast<int>(m), &alpha,
          pb, static_cast<int>(lb.ld), strideB, pa, static_cast<int>(la.ld), strideA, &beta, po,
          static_cast<int>(p), strideOut, static_cast<int>(B)));
    }
    done = true;
  });
  return done;
}

void CudaComputeBackend::synchronize() {
  select();
  MATMULVIZ_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace matmulviz::kernels::cuda

// The primitives' bodies for this device, after its launch hooks are defined.
template class matmulviz::kernels::engine::EngineBackend<
    matmulviz::kernels::cuda::CudaComputeBackend>;
