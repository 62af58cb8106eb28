#pragma once
// The engine's kernels as types, so that one generic launch can run any of them: each Op names
// its kernel (for reports and errors) and calls its body (kernels/engine/*_kernels.h) with a
// thread context. The simulated device runs Op::run in the simulator; the CUDA backend has one
// __global__ template that builds the GPU's context and calls Op::run.

#include "kernels/08_grouped_bmm.h"
#include "kernels/engine/elementwise_kernels.h"
#include "kernels/engine/gather_bmm_kernels.h"
#include "kernels/engine/gemm_kernel.h"
#include "kernels/engine/index_kernels.h"
#include "kernels/engine/reduce_kernel.h"

namespace matmulviz::kernels::engine {

#define MATMULVIZ_ENGINE_OP(Name, label, body)                 \
  struct Name {                                                \
    static constexpr const char* name = label;                 \
    template <class Ctx, class Args>                           \
    MATMULVIZ_HD static void run(Ctx& ctx, const Args& args) { \
      body(ctx, args);                                         \
    }                                                          \
  };

MATMULVIZ_ENGINE_OP(CopyOp, "copy", copyKernel)
MATMULVIZ_ENGINE_OP(AddOp, "add", addKernel)
MATMULVIZ_ENGINE_OP(MulOp, "mul", mulKernel)
MATMULVIZ_ENGINE_OP(SumOp, "sum", sumKernel)
MATMULVIZ_ENGINE_OP(GemmOp, "gemm", gemmKernel)
MATMULVIZ_ENGINE_OP(IndexRowsOp, "index", indexRowsKernel)
MATMULVIZ_ENGINE_OP(IndexAddRowsOp, "index_put_", indexAddRowsKernel)
MATMULVIZ_ENGINE_OP(GatherBmmOp, "gather_bmm", gatherBmmForwardKernel)
MATMULVIZ_ENGINE_OP(GatherBmmGradAOp, "gather_bmm_grad_a", gatherBmmGradAKernel)
MATMULVIZ_ENGINE_OP(GatherBmmGradCOp, "gather_bmm_grad_c", gatherBmmGradCKernel)

MATMULVIZ_ENGINE_OP(GroupHistogramOp, "grouped_bmm histogram", groupHistogram)
MATMULVIZ_ENGINE_OP(GroupScatterOp, "grouped_bmm scatter", groupScatter)

#undef MATMULVIZ_ENGINE_OP

/// Kernel 08's prefix sum with its [2, blockDim.x] ints of dynamic shared memory.
struct GroupOffsetsOp {
  static constexpr const char* name = "grouped_bmm offsets";
  template <class Ctx>
  MATMULVIZ_HD static void run(Ctx& ctx, const GroupedBmmArgs& args) {
    groupOffsets(ctx, args,
                 sim::SharedView<int>{static_cast<int*>(ctx.sharedMemory()), 2,
                                      static_cast<int>(ctx.blockDim().x), kArraySums, "sums"});
  }
};

/// Kernel 08's product with c[m], [J, K] floats, in dynamic shared memory.
struct GroupedBmmOp {
  static constexpr const char* name = "grouped_bmm";
  template <class Ctx>
  MATMULVIZ_HD static void run(Ctx& ctx, const GroupedBmmArgs& args) {
    groupedBmm(ctx, args,
               sim::SharedView<float>{static_cast<float*>(ctx.sharedMemory()), args.g.J, args.g.K,
                                      kArrayCs, "cs"});
  }
};

/// fillZero's arguments: t's storage as T of its element width, n elements from offset.
template <class T>
struct FillZeroArgs {
  sim::GlobalView<T> dst;
  std::int64_t offset = 0;
  std::int64_t n = 0;
};

struct FillZeroOp {
  static constexpr const char* name = "fill_zero";
  template <class Ctx, class T>
  MATMULVIZ_HD static void run(Ctx& ctx, const FillZeroArgs<T>& args) {
    fillZeroKernel(ctx, args.dst, args.offset, args.n);
  }
};

}  // namespace matmulviz::kernels::engine
