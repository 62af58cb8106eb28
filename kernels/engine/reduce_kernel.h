#pragma once
// The engine's sum (core/tensor/compute_backend.h sumInto): one thread per output element adds
// up, in double, the input elements that map to it, and rounds once, as the host path does.

#include <cstdint>

#include "core/sim/views.h"
#include "kernels/engine/strided.h"

namespace matmulviz::kernels::engine {

template <class T>
struct SumArgs {
  sim::GlobalView<T> out;
  sim::GlobalView<const T> t;
  Strided keptT;       ///< t over the kept dims (sizes of the output's elements)
  Strided keptOut;     ///< out over the same index space
  Strided summed;      ///< t over the summed dims, offset 0
  std::int64_t n = 0;  ///< kept elements (threads)
};

template <class Ctx, class T>
MATMULVIZ_HD void sumKernel(Ctx& ctx, const SumArgs<T>& p) {
  const std::int64_t o = linearThread(ctx);
  if (o >= p.n) return;
  const std::int64_t base = p.keptT.at(o);
  double acc = 0;
  for (std::int64_t r = 0, count = p.summed.numel(); r < count; ++r)
    acc += static_cast<double>(ctx.load(p.t, base + p.summed.at(r)));
  ctx.store(p.out, p.keptOut.at(o), static_cast<T>(acc));
}

}  // namespace matmulviz::kernels::engine
