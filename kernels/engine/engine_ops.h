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
// Kernel 08 (kernels/08_grouped_bmm.h), the fused forward where groupedBmmApplies.
MATMULVIZ_ENGINE_OP(GroupHistogramOp, "grouped_bmm histogram", groupHistogram)
MATMULVIZ_ENGINE_OP(GroupOffsetsOp, "grouped_bmm offsets", groupOffsets)
MATMULVIZ_ENGINE_OP(GroupScatterOp, "grouped_bmm scatter", groupScatter)
MATMULVIZ_ENGINE_OP(GroupedBmmOp, "grouped_bmm", groupedBmm)

#undef MATMULVIZ_ENGINE_OP

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
