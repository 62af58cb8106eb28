#pragma once
// When the fused gathered matmul (gatherBmm, core/ops/ops.h) runs as kernel 08 on a device
// (kernels/08_grouped_bmm.h: the items bucketed by q, then one block per matrix of c with c[m] in
// shared memory), and the bucket workspace it allocates for that. One rule for every device, so
// that a meta run, a cpu run and a GPU run of the same program report the same memory.

#include <cstdint>

namespace matmulviz {

class Tensor;

/// Kernel 08's buckets, int32 in one allocation: counts [M], offsets [M + 1], cursor [M],
/// rows [N], in that order. Allocated as an int64 tensor of int64Elements (the engine has no
/// int32 dtype); its bytes are the caching allocator's request.
struct GroupedBmmWorkspace {
  static std::int64_t ints(std::int64_t N, std::int64_t M) { return 3 * M + 1 + N; }
  static std::int64_t int64Elements(std::int64_t N, std::int64_t M) { return (ints(N, M) + 1) / 2; }
  static std::int64_t counts(std::int64_t) { return 0; }
  static std::int64_t offsets(std::int64_t M) { return M; }
  static std::int64_t cursor(std::int64_t M) { return 2 * M + 1; }
  static std::int64_t rows(std::int64_t M) { return 3 * M + 1; }
};

/// True when gatherBmm(a, c, q) runs as kernel 08: a and c float32 and contiguous, q contiguous
/// or in host memory (its device copy is contiguous), c[m] ([J, K] floats) within the 48 KiB of
/// shared memory a launch gets, and N, M and N * I within int32. Otherwise the one-thread-per-
/// element kernel runs and nothing more is allocated. Shapes, dtypes and strides only: a meta
/// tensor answers as a real one does.
bool groupedBmmApplies(const Tensor& a, const Tensor& c, const Tensor& q);

}  // namespace matmulviz
