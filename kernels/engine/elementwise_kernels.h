#pragma once
// The engine's elementwise kernels (core/tensor/compute_backend.h: copy, fillZero, addInPlace,
// mulInPlace): one thread per element of a 1-d launch, each operand a strided layout over a 1-d
// view of its whole storage, so the simulator bounds-checks every access against the storage.
// Element types are the storage's (float, double, int64, and uint16 bits for 16-bit copies).

#include <cstdint>

#include "core/sim/views.h"
#include "kernels/engine/strided.h"

namespace matmulviz::kernels::engine {

template <class TD, class TS>
struct BinaryArgs {
  sim::GlobalView<TD> dst;
  sim::GlobalView<const TS> src;
  Strided dstLayout;
  Strided srcLayout;  ///< same sizes as dstLayout
  std::int64_t n = 0;
};

/// dst = src, converted with a C++ cast (float <-> double, same-type copies of any width).
template <class Ctx, class TD, class TS>
MATMULVIZ_HD void copyKernel(Ctx& ctx, const BinaryArgs<TD, TS>& p) {
  const std::int64_t e = linearThread(ctx);
  if (e < p.n)
    ctx.store(p.dst, p.dstLayout.at(e), static_cast<TD>(ctx.load(p.src, p.srcLayout.at(e))));
}

/// dst += src.
template <class Ctx, class T>
MATMULVIZ_HD void addKernel(Ctx& ctx, const BinaryArgs<T, T>& p) {
  const std::int64_t e = linearThread(ctx);
  if (e < p.n) {
    const std::int64_t d = p.dstLayout.at(e);
    ctx.store(p.dst, d, ctx.load(p.dst, d) + ctx.load(p.src, p.srcLayout.at(e)));
  }
}

/// dst *= src.
template <class Ctx, class T>
MATMULVIZ_HD void mulKernel(Ctx& ctx, const BinaryArgs<T, T>& p) {
  const std::int64_t e = linearThread(ctx);
  if (e < p.n) {
    const std::int64_t d = p.dstLayout.at(e);
    ctx.store(p.dst, d, ctx.load(p.dst, d) * ctx.load(p.src, p.srcLayout.at(e)));
  }
}

/// dst[0..n) = 0 (a contiguous tensor; T of the storage's width).
template <class Ctx, class T>
MATMULVIZ_HD void fillZeroKernel(Ctx& ctx, const sim::GlobalView<T>& dst, std::int64_t offset,
                                 std::int64_t n) {
  const std::int64_t e = linearThread(ctx);
  if (e < n) ctx.store(dst, offset + e, T{});
}

}  // namespace matmulviz::kernels::engine
