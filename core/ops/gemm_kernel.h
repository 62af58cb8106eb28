#pragma once
// out[b] = a[b] @ b[b] for 3-d strided operands on the host, with BLAS. float32/float64 go to
// sgemm/dgemm directly when each matrix has a unit stride in one dimension (row- or
// column-major with a leading dimension, as cuBLAS accepts); float16/bfloat16 are converted to
// float32, multiplied, and rounded back (accumulation in float32, as cuBLAS does by default).

#include "core/tensor/tensor.h"

namespace matmulviz::detail {

/// Whether BLAS can read this [rows, cols] matrix as it is (no copy needed).
bool blasCompatible(int64_t rows, int64_t cols, int64_t rowStride, int64_t colStride);

/// out: [B, n, p] contiguous; a: [B, n, m]; b: [B, m, p], any strides that pass
/// blasCompatible (callers make operands contiguous otherwise). All three may also be 2-d
/// ([n, p], [n, m], [m, p]: B = 1) on the host; a device with a compute backend gets 3-d
/// operands only. On an accounted device it first takes the thread's cuBLAS handle
/// (useCublasHandle: PyTorch 2.x allocates the thread's workspace on its first use) when the
/// product has work in it (B, n, p, m > 0). No arithmetic on meta.
void batchedGemm(const Tensor& out, const Tensor& a, const Tensor& b);

}  // namespace matmulviz::detail
