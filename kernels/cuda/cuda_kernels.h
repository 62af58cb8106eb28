#pragma once
// Real launches on a CUDA GPU: the kernel variants of kernels/ (the same bodies the simulator
// runs, wrapped in __global__ functions) and cuBLAS as the reference, timed with CUDA events.
// Available when the build has the CUDA backend (MATMULVIZ_HAVE_CUDA) and a device answers
// (probeCuda()); otherwise every function throws CudaError saying why.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/matmul_problem.h"

namespace matmulviz::kernels::cuda {

/// One timed GPU run.
struct CudaRun {
  std::vector<float> out;  ///< the result, copied back: [batch, M, N] or [M, N]
  double medianMs = 0;     ///< median over `repeats` launches after one warm-up, CUDA events
  double minMs = 0;
  std::string device;  ///< "NVIDIA H100 80GB HBM3 (sm_90)"
};

/// Runs the kernel variant `name` (naive, coalesced, smem_tiled, gather_bmm, grouped_bmm: its
/// four launches timed together) on device 0 with
/// TPB x TPB blocks: inputs copied to the device, `repeats` >= 1 timed launches (kernel only),
/// output copied back. Throws std::invalid_argument for an unknown name, bad sizes/TPB or q
/// out of range (checked on the host, before the launch); CudaError when a CUDA call fails.
CudaRun runKernel(std::string_view name, const MatmulProblem& problem, int tpb,
                  const MatmulInputs& in, int repeats);

/// How cuBLAS multiplies a gathered batch (out[n] = a[n] @ c[q[n]]).
enum class CublasMode {
  Gemm,            ///< 2-D problem: one cublasSgemm
  StridedBatched,  ///< gathered: copy c[q] to [batch, K, N], then cublasSgemmStridedBatched
                   ///< (what torch.matmul(a, c[q]) does); the copy is timed too
  GatherPointers,  ///< gathered: cublasGemmBatchedEx with B pointers c + q[n]*K*N, no copy
};

/// cuBLAS reference (float32, no tensor cores: CUBLAS_COMPUTE_32F, CUBLAS_DEFAULT_MATH).
/// Throws as runKernel.
CudaRun runCublas(const MatmulProblem& problem, CublasMode mode, const MatmulInputs& in,
                  int repeats);

/// "gemm", "strided_batched", "gather_pointers".
const char* toString(CublasMode mode);

}  // namespace matmulviz::kernels::cuda
