// cuBLAS as the reference of the kernel registry on a GPU: sgemm, strided batched sgemm over a
// copied c[q], and gemmBatchedEx over pointers built from q (no copy). Row-major C = A @ B is
// computed as column-major C^T = B^T @ A^T: cublas(N, N, n=N, m=M, k=K, B, ldb=N, A, lda=K, C).
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/device_buffer.cuh"

namespace matmulviz::kernels::cuda {
namespace {

class CublasHandle {
 public:
  CublasHandle() {
    MATMULVIZ_CUBLAS_CHECK(cublasCreate(&handle_));
    // Plain float32 arithmetic: no TF32 tensor cores, so the numbers match the kernels'.
    const cublasStatus_t status = cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH);
    if (status != CUBLAS_STATUS_SUCCESS) cublasDestroy(handle_);
    MATMULVIZ_CUBLAS_CHECK(status);
  }
  ~CublasHandle() { cublasDestroy(handle_); }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

/// cq[n] = c[q[n]]: the copy torch.matmul(a, c[q]) makes before its bmm. cq: [N, K, N].
__global__ void gatherRows(const float* c, const std::int64_t* q, float* cq, std::int64_t items,
                           std::int64_t matrixElements) {
  const std::int64_t total = items * matrixElements;
  for (std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t n = e / matrixElements;
    cq[e] = c[q[n] * matrixElements + e % matrixElements];
  }
}

}  // namespace

const char* toString(CublasMode mode) {
  switch (mode) {
    case CublasMode::Gemm:
      return "gemm";
    case CublasMode::StridedBatched:
      return "strided_batched";
    case CublasMode::GatherPointers:
      return "gather_pointers";
  }
  return "unknown";
}

CudaRun runCublas(const MatmulProblem& p, CublasMode mode, const MatmulInputs& in, int repeats) {
  if (repeats < 1) throw std::invalid_argument("repeats must be at least 1");
  const bool gathered = mode != CublasMode::Gemm;
  validate(p, gathered);
  if (gathered) {
    for (std::size_t n = 0; n < in.q.size(); ++n) {
      if (in.q[n] < 0 || in.q[n] >= p.table) {
        throw std::invalid_argument("q[" + std::to_string(n) + "] = " + std::to_string(in.q[n]) +
                                    " is outside 0.." + std::to_string(p.table - 1));
      }
    }
  }
  const int M = static_cast<int>(p.M);
  const int K = static_cast<int>(p.K);
  const int N = static_cast<int>(p.N);
  const int batch = static_cast<int>(gathered ? p.batch : 1);
  CublasHandle handle;
  DeviceBuffer<float> a(in.a);
  DeviceBuffer<float> b(in.b);
  DeviceBuffer<float> out(static_cast<std::size_t>(outputElements(p, gathered)));
  const float alpha = 1.f;
  const float beta = 0.f;

  std::vector<const void*> aPtrs;
  std::vector<const void*> bPtrs;
  std::vector<void*> cPtrs;
  if (mode == CublasMode::GatherPointers) {
    for (int n = 0; n < batch; ++n) {
      aPtrs.push_back(a.get() + static_cast<std::int64_t>(n) * M * K);
      bPtrs.push_back(b.get() + in.q[static_cast<std::size_t>(n)] * K * N);
      cPtrs.push_back(out.get() + static_cast<std::int64_t>(n) * M * N);
    }
  }
  DeviceBuffer<const void*> aArray(aPtrs);
  DeviceBuffer<const void*> bArray(bPtrs);
  DeviceBuffer<void*> cArray(cPtrs);
  DeviceBuffer<std::int64_t> q(mode == CublasMode::StridedBatched ? in.q
                                                                  : std::vector<std::int64_t>{});
  DeviceBuffer<float> cq(
      mode == CublasMode::StridedBatched ? static_cast<std::size_t>(p.batch * p.K * p.N) : 0);

  auto launch = [&] {
    switch (mode) {
      case CublasMode::Gemm:
        MATMULVIZ_CUBLAS_CHECK(cublasSgemm(handle.get(), CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha,
                                           b.get(), N, a.get(), K, &beta, out.get(), N));
        break;
      case CublasMode::StridedBatched: {
        const std::int64_t elements = p.batch * p.K * p.N;
        const int threads = 256;
        const int blocks =
            static_cast<int>(std::min<std::int64_t>((elements + threads - 1) / threads, 65535));
        gatherRows<<<blocks, threads>>>(b.get(), q.get(), cq.get(), p.batch, p.K * p.N);
        MATMULVIZ_CUDA_CHECK(cudaGetLastError());
        MATMULVIZ_CUBLAS_CHECK(cublasSgemmStridedBatched(
            handle.get(), CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, cq.get(), N,
            static_cast<long long>(K) * N, a.get(), K, static_cast<long long>(M) * K, &beta,
            out.get(), N, static_cast<long long>(M) * N, batch));
        break;
      }
      case CublasMode::GatherPointers:
        MATMULVIZ_CUBLAS_CHECK(cublasGemmBatchedEx(
            handle.get(), CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, bArray.get(), CUDA_R_32F, N,
            aArray.get(), CUDA_R_32F, K, &beta, cArray.get(), CUDA_R_32F, N, batch,
            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        break;
    }
  };

  CudaRun run;
  run.device = currentDeviceName();
  launch();
  MATMULVIZ_CUDA_CHECK(cudaDeviceSynchronize());
  EventTimer timer;
  std::vector<double> ms;
  for (int r = 0; r < repeats; ++r) {
    timer.start();
    launch();
    ms.push_back(timer.stopMs());
  }
  medianMin(ms, run.medianMs, run.minMs);
  run.out = out.toHost();
  return run;
}

}  // namespace matmulviz::kernels::cuda
