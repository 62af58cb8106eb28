// The engine's primitives on a GPU: each __global__ wrapper builds the GPU's thread context and
// calls the body the simulated device runs (kernels/engine/*_kernels.h), with the arguments
// kernels/engine/engine_args.h builds for both. mm/bmm go to cuBLAS: row-major out = a @ b is
// computed as column-major out^T = b^T @ a^T (cublas_matmul.cu), each operand passed as stored
// (op N for a row-major matrix, op T for a column-major one).
#include "kernels/cuda/cuda_compute_backend.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/device_context.cuh"
#include "kernels/engine/engine_args.h"

namespace matmulviz::kernels::cuda {
namespace {

template <class TD, class TS>
__global__ void copyGlobal(engine::BinaryArgs<TD, TS> p) {
  DeviceContext ctx;
  engine::copyKernel(ctx, p);
}

template <class T>
__global__ void addGlobal(engine::BinaryArgs<T, T> p) {
  DeviceContext ctx;
  engine::addKernel(ctx, p);
}

template <class T>
__global__ void mulGlobal(engine::BinaryArgs<T, T> p) {
  DeviceContext ctx;
  engine::mulKernel(ctx, p);
}

template <class T>
__global__ void sumGlobal(engine::SumArgs<T> p) {
  DeviceContext ctx;
  engine::sumKernel(ctx, p);
}

template <class T>
__global__ void gemmGlobal(engine::GemmArgs<T> g) {
  DeviceContext ctx;
  engine::gemmKernel(ctx, g);
}

template <class T>
__global__ void indexRowsGlobal(engine::IndexArgs<T> p) {
  DeviceContext ctx;
  engine::indexRowsKernel(ctx, p);
}

template <class T>
__global__ void indexAddRowsGlobal(engine::IndexArgs<T> p) {
  DeviceContext ctx;
  engine::indexAddRowsKernel(ctx, p);
}

template <class T>
__global__ void gatherBmmForwardGlobal(engine::GatherBmmOperands<T> p) {
  DeviceContext ctx;
  engine::gatherBmmForwardKernel(ctx, p);
}

template <class T>
__global__ void gatherBmmGradAGlobal(engine::GatherBmmOperands<T> p) {
  DeviceContext ctx;
  engine::gatherBmmGradAKernel(ctx, p);
}

template <class T>
__global__ void gatherBmmGradCGlobal(engine::GatherBmmOperands<T> p) {
  DeviceContext ctx;
  engine::gatherBmmGradCKernel(ctx, p);
}

/// kernel<<<ceil(n / kEngineBlock), kEngineBlock>>>(args), one thread per element; nothing for
/// n == 0. Throws CudaError when the launch fails, std::invalid_argument when n needs more
/// blocks than a 1-d grid has.
template <class Args>
void launch(void (*kernel)(Args), std::int64_t n, const Args& args, const char* op) {
  if (n <= 0) return;
  const std::int64_t blocks = (n + engine::kEngineBlock - 1) / engine::kEngineBlock;
  if (blocks > std::numeric_limits<int>::max())
    throw std::invalid_argument(std::string(op) + ": " + std::to_string(n) +
                                " elements need more blocks than a 1-d CUDA grid has");
  kernel<<<static_cast<unsigned>(blocks), engine::kEngineBlock>>>(args);
  MATMULVIZ_CUDA_CHECK(cudaGetLastError());
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

/// Throws std::invalid_argument unless t's memory is `backend`'s.
void requireOn(const ComputeBackend* backend, const Tensor& t, const char* op, const char* name) {
  if (t.compute() == backend) return;
  throw std::invalid_argument(
      std::string(op) + ": " + name + " is not on this cuda device (" +
      (t.compute() ? "on " + t.compute()->name() : std::string("host memory")) +
      "); move it there first");
}

void requireInt64(const Tensor& t, const char* op, const char* name) {
  if (t.dtype() != DType::Int64)
    throw std::invalid_argument(std::string(op) + ": " + name + " must be int64, got " +
                                std::string(dtypeName(t.dtype())));
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

void CudaComputeBackend::copy(const Tensor& dst, const Tensor& src) {
  const bool dstHere = dst.compute() == this;
  const bool srcHere = src.compute() == this;
  if (dst.numel() != src.numel())
    throw std::invalid_argument("copy: " + dst.shapeString() + " from " + src.shapeString() +
                                ": the element counts differ");
  select();
  if (dstHere && srcHere) {
    engine::dispatchCopy(dst.dtype(), src.dtype(), [&](auto dstTag, auto srcTag) {
      using TD = decltype(dstTag);
      using TS = decltype(srcTag);
      launch(copyGlobal<TD, TS>, dst.numel(), engine::binaryArgs<TD, TS>(dst, src), "copy");
    });
    return;
  }
  // A transfer: the other side must be host memory (no compute backend of its own).
  const Tensor& other = dstHere ? src : dst;
  if ((!dstHere && !srcHere) || other.compute() != nullptr)
    throw std::invalid_argument(
        "copy: one side must be on this cuda device and the other in host memory (got " +
        std::string(dst.compute() ? dst.compute()->name() : "host") + " <- " +
        std::string(src.compute() ? src.compute()->name() : "host") + "); copy through the host");
  if (dst.dtype() != src.dtype() || !dst.isContiguous() || !src.isContiguous())
    throw std::invalid_argument(
        std::string("copy: a transfer ") + (dstHere ? "to" : "from") +
        " the cuda device takes contiguous tensors of one dtype (got " +
        std::string(dtypeName(src.dtype())) + (src.isContiguous() ? "" : " strided") + " to " +
        std::string(dtypeName(dst.dtype())) + (dst.isContiguous() ? "" : " strided") +
        "); make it contiguous and convert it on one side first");
  const std::int64_t bytes = dst.nbytes();
  if (bytes == 0) return;
  if (other.dataPtr() == nullptr)
    throw std::invalid_argument("copy: the host side has no data (a meta tensor?)");
  MATMULVIZ_CUDA_CHECK(cudaMemcpy(dst.dataPtr(), src.dataPtr(), static_cast<std::size_t>(bytes),
                                  dstHere ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost));
}

void CudaComputeBackend::fillZero(const Tensor& t) {
  requireOn(this, t, "fillZero", "the tensor");
  if (!t.isContiguous())
    throw std::invalid_argument("fillZero: the tensor must be contiguous, got a strided view of " +
                                t.shapeString());
  const std::int64_t bytes = t.nbytes();
  if (bytes == 0) return;
  select();
  MATMULVIZ_CUDA_CHECK(cudaMemsetAsync(t.dataPtr(), 0, static_cast<std::size_t>(bytes)));
}

void CudaComputeBackend::addInPlace(const Tensor& a, const Tensor& b) {
  requireOn(this, a, "add_", "self");
  requireOn(this, b, "add_", "other");
  select();
  engine::dispatchArithmetic(a.dtype(), "add_", [&](auto tag) {
    using T = decltype(tag);
    launch(addGlobal<T>, a.numel(), engine::binaryArgs<T, T>(a, b), "add_");
  });
}

void CudaComputeBackend::mulInPlace(const Tensor& a, const Tensor& b) {
  requireOn(this, a, "mul_", "self");
  requireOn(this, b, "mul_", "other");
  select();
  engine::dispatchArithmetic(a.dtype(), "mul_", [&](auto tag) {
    using T = decltype(tag);
    launch(mulGlobal<T>, a.numel(), engine::binaryArgs<T, T>(a, b), "mul_");
  });
}

void CudaComputeBackend::sumInto(const Tensor& out, const Shape& outStrides, const Tensor& t) {
  requireOn(this, out, "sum", "out");
  requireOn(this, t, "sum", "the input");
  if (static_cast<std::int64_t>(outStrides.size()) != t.dim())
    throw std::invalid_argument("sum: " + std::to_string(outStrides.size()) +
                                " output strides for a tensor of " + std::to_string(t.dim()) +
                                " dims");
  if (t.dim() > engine::kMaxDims)  // sumArgs splits t's dims into fixed-size layouts
    throw std::invalid_argument("sum: a tensor of " + std::to_string(t.dim()) +
                                " dims: the device kernels take at most " +
                                std::to_string(engine::kMaxDims));
  select();
  engine::dispatchArithmetic(t.dtype(), "sum", [&](auto tag) {
    using T = decltype(tag);
    const engine::SumArgs<T> p = engine::sumArgs<T>(out, outStrides, t);
    launch(sumGlobal<T>, p.n, p, "sum");
  });
}

void CudaComputeBackend::gemm(const Tensor& out, const Tensor& a, const Tensor& b) {
  requireOn(this, out, "matmul", "out");
  requireOn(this, a, "matmul", "self");
  requireOn(this, b, "matmul", "other");
  const std::int64_t B = a.size(0), n = a.size(1), m = a.size(2), p = b.size(2);
  if (B == 0 || n == 0 || p == 0) return;
  if (m == 0) return fillZero(out);  // an empty sum; BLAS would want leading dims >= 1
  select();
  engine::dispatchArithmetic(out.dtype(), "matmul", [&](auto tag) {
    using T = decltype(tag);
    const BlasOperand la = blasOperand(n, m, a.stride(1), a.stride(2));
    const BlasOperand lb = blasOperand(m, p, b.stride(1), b.stride(2));
    const bool blas = la.ok && lb.ok && fitsInt(B) && fitsInt(n) && fitsInt(m) && fitsInt(p) &&
                      fitsInt(la.ld) && fitsInt(lb.ld) && a.stride(0) >= 0 && b.stride(0) >= 0;
    if (!blas) {
      const engine::GemmArgs<T> g = engine::gemmArgs<T>(out, a, b);
      launch(gemmGlobal<T>, B * n * p, g, "matmul");
      return;
    }
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
  });
}

void CudaComputeBackend::indexRows(const Tensor& out, const Tensor& t, const Tensor& index) {
  requireOn(this, out, "index", "out");
  requireOn(this, t, "index", "self");
  requireOn(this, index, "index", "the index");
  requireInt64(index, "index", "the index");
  select();
  engine::dispatchCopy(out.dtype(), t.dtype(), [&](auto dstTag, auto srcTag) {
    using TD = decltype(dstTag);
    using TS = decltype(srcTag);
    if constexpr (!std::is_same_v<TD, TS>) {
      throw std::invalid_argument("index: out is " + std::string(dtypeName(out.dtype())) +
                                  " but self is " + std::string(dtypeName(t.dtype())));
    } else {
      const engine::IndexArgs<TD> p = engine::indexArgs<TD>(out, t, index, /*gather=*/true);
      launch(indexRowsGlobal<TD>, p.count * p.inner, p, "index");
    }
  });
}

void CudaComputeBackend::indexAddRows(const Tensor& out, const Tensor& index, const Tensor& g) {
  requireOn(this, out, "index_put_", "out");
  requireOn(this, index, "index_put_", "the index");
  requireOn(this, g, "index_put_", "the values");
  requireInt64(index, "index_put_", "the index");
  select();
  engine::dispatchArithmetic(out.dtype(), "index_put_ (accumulate)", [&](auto tag) {
    using T = decltype(tag);
    const engine::IndexArgs<T> p = engine::indexArgs<T>(out, g, index, /*gather=*/false);
    launch(indexAddRowsGlobal<T>, p.count * p.inner, p, "index_put_");
  });
}

void CudaComputeBackend::gatherBmm(const Tensor& out, const Tensor& a, const Tensor& c,
                                   const Tensor& q) {
  requireOn(this, out, "gather_bmm", "out");
  requireOn(this, a, "gather_bmm", "a");
  requireOn(this, c, "gather_bmm", "c");
  requireOn(this, q, "gather_bmm", "q");
  requireInt64(q, "gather_bmm", "q");
  select();
  engine::dispatchArithmetic(out.dtype(), "gather_bmm", [&](auto tag) {
    using T = decltype(tag);
    const std::int64_t N = a.size(0), I = a.size(1), J = a.size(2), K = c.size(2);
    const engine::GatherBmmOperands<T> p = engine::gatherBmmArgs<T>(out, a, c, q, N, I, J, K);
    launch(gatherBmmForwardGlobal<T>, N * I * K, p, "gather_bmm");
  });
}

void CudaComputeBackend::gatherBmmGradA(const Tensor& dA, const Tensor& dO, const Tensor& c,
                                        const Tensor& q) {
  requireOn(this, dA, "gather_bmm backward", "dA");
  requireOn(this, dO, "gather_bmm backward", "the output's gradient");
  requireOn(this, c, "gather_bmm backward", "c");
  requireOn(this, q, "gather_bmm backward", "q");
  requireInt64(q, "gather_bmm backward", "q");
  select();
  engine::dispatchArithmetic(dA.dtype(), "gather_bmm backward", [&](auto tag) {
    using T = decltype(tag);
    const std::int64_t N = dA.size(0), I = dA.size(1), J = dA.size(2), K = c.size(2);
    const engine::GatherBmmOperands<T> p = engine::gatherBmmArgs<T>(dA, dO, c, q, N, I, J, K);
    launch(gatherBmmGradAGlobal<T>, N * I * J, p, "gather_bmm backward");
  });
}

void CudaComputeBackend::gatherBmmGradC(const Tensor& dC, const Tensor& a, const Tensor& dO,
                                        const Tensor& q) {
  requireOn(this, dC, "gather_bmm backward", "dC");
  requireOn(this, a, "gather_bmm backward", "a");
  requireOn(this, dO, "gather_bmm backward", "the output's gradient");
  requireOn(this, q, "gather_bmm backward", "q");
  requireInt64(q, "gather_bmm backward", "q");
  select();
  engine::dispatchArithmetic(dC.dtype(), "gather_bmm backward", [&](auto tag) {
    using T = decltype(tag);
    const std::int64_t N = a.size(0), I = a.size(1), J = a.size(2), K = dO.size(2);
    const engine::GatherBmmOperands<T> p = engine::gatherBmmArgs<T>(dC, a, dO, q, N, I, J, K);
    launch(gatherBmmGradCGlobal<T>, N * J * K, p, "gather_bmm backward");
  });
}

void CudaComputeBackend::synchronize() {
  select();
  MATMULVIZ_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace matmulviz::kernels::cuda
