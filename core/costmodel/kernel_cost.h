#pragma once
// The cost model of one launch of the lesson's kernels (kernels/01_naive.h to 04_gather_bmm.h,
// and 08_grouped_bmm.h's launches together)
// and of cuBLAS, from the kernels' access patterns rather than from a simulated run: device
// memory bytes (each input read once, the output written once; what does not fit in L2 is not
// modelled), the 128-byte lines each warp's loads and stores touch in L1 or shared memory (a
// warp that reads 16 rows of A at one k touches 16 lines: the naive kernel's uncoalesced
// access), and FLOPs. These are what the GPU path (`launch --device cuda`) cannot get from the
// simulator; at 4096 x 4096 x 4096 the simulator would take days.

#include <cstdint>
#include <string>
#include <string_view>

#include "core/costmodel/cost_model.h"

namespace matmulviz::costmodel {

/// One launch: C [M, N] = A [M, K] @ B [K, N], row-major, float32, TPB x TPB blocks as the
/// kernel's config makes them; gathered (gather_bmm, cublas_gather_pointers): `batch` items of
/// a [M, K] @ c[q[b]] [K, N] with c [table, K, N] (the strategies' I, J, K are M, K, N here).
struct KernelShape {
  std::string kernel;  ///< naive | coalesced | smem_tiled | gather_bmm | grouped_bmm |
                       ///< cublas_gemm | cublas_gather_pointers
  std::int64_t M = 0, K = 0, N = 0;
  int tpb = 16;
  std::int64_t batch = 1, table = 1;
};

/// "naive|coalesced|smem_tiled|gather_bmm|grouped_bmm|cublas_gemm|cublas_gather_pointers".
std::string modelledKernelNames();

/// Whether kernelCounts knows `kernel`.
bool hasKernelModel(std::string_view kernel);

/// The counts of one launch (launches = 1; grouped_bmm: its 4 launches and 1 memset, 5). Throws
/// std::invalid_argument for a kernel without a model (the faulty teaching kernels among them),
/// sizes < 1 or tpb outside 1..32.
WorkCounts kernelCounts(const KernelShape& shape);

/// predict(kernelCounts(shape), gpu), with cuBLAS's FLOPs at gpu.sgemmFlopsPerS; the explanation
/// names the term that sets it. Throws as kernelCounts.
Prediction predictKernel(const KernelShape& shape, const GpuProfile& gpu);

}  // namespace matmulviz::costmodel
