#pragma once
// Arguments of the kernel variants: views of row-major float32 matrices. Host and device.

#include <cstdint>

#include "core/sim/views.h"

namespace matmulviz::kernels {

/// C = A @ B. a: [M, K], b: [K, N], c: [M, N], all row-major, contiguous.
struct MatmulArgs {
  sim::GlobalView<const float> a;
  sim::GlobalView<const float> b;
  sim::GlobalView<float> c;
  int M = 0;
  int K = 0;
  int N = 0;
};

/// out[n] = a[n] @ c[q[n]] (the fused gather-matmul of the PyTorch forum post), sizes as in the
/// seed: a: [N, I, J], c: [M, J, K], q: [N] int64 with 0 <= q[n] < M, out: [N, I, K].
struct GatherBmmArgs {
  sim::GlobalView<const float> a;
  sim::GlobalView<const float> c;
  sim::GlobalView<const std::int64_t> q;
  sim::GlobalView<float> out;
  int N = 0;
  int I = 0;
  int J = 0;
  int K = 0;
  int M = 0;
};

/// Ids of the arrays in a launch's array table (diagnostics, traces).
enum ArrayId : int {
  kArrayA = 0,
  kArrayB = 1,
  kArrayC = 2,
  kArrayQ = 3,
  kArrayAs = 4,
  kArrayBs = 5
};

}  // namespace matmulviz::kernels
