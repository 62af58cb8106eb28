#pragma once
// Host loops shared by the pointwise ops (pointwise.h): element access for every arithmetic dtype
// (the float ones of strided_loop.h plus int64), in-place maps over a contiguous output, and the
// check that refuses a tensor whose memory the host must not read.

#include "core/ops/ops.h"
#include "core/ops/pointwise.h"
#include "core/ops/shape_rules.h"
#include "core/ops/strided_loop.h"

#include <string>
#include <vector>

namespace matmulviz::detail {

struct I64 {
  using Acc = int64_t;
  using Stored = int64_t;
  static int64_t load(const void* p, int64_t i) { return static_cast<const int64_t*>(p)[i]; }
  static void store(void* p, int64_t i, int64_t v) { static_cast<int64_t*>(p)[i] = v; }
};

/// fn(F32{}) ... fn(I64{}) by dtype; throws std::invalid_argument for any other dtype.
template <typename F>
void dispatchArithmetic(DType t, F&& fn) {
  if (t == DType::Int64) {
    fn(I64{});
    return;
  }
  dispatchFloating(t, std::forward<F>(fn));
}

/// Throws NotSupportedError when `t` lives on a device with its own compute backend (its memory
/// is not the host's): `op` has no primitive there.
inline void requireHostCompute(const Tensor& t, const std::string& op) {
  if (ComputeBackend* be = t.compute())
    throw NotSupportedError(op + " on a " + be->name() +
                            " device: matmulviz has no device kernel for it (it runs on the host "
                            "and on the simulated cuda device of matmulviz.torch)");
}

/// out[i] = f(out[i], b[i]) for every element, computed in out's accumulation type; b (same
/// sizes, any strides: an expanded view) is read in its own dtype and converted.
template <typename F>
void combineInPlace(const Tensor& out, const Tensor& b, F&& f) {
  dispatchArithmetic(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using Acc = typename T::Acc;
    void* po = out.dataPtr();
    const void* pb = b.dataPtr();
    const DType bt = b.dtype();
    const bool same = bt == out.dtype();
    forEachRun(out.sizes(), out.strides(), b.strides(),
               [&](int64_t oo, int64_t ob, int64_t n, int64_t so, int64_t sb) {
                 for (int64_t i = 0; i < n; ++i) {
                   const Acc bv = same ? static_cast<Acc>(T::load(pb, ob + i * sb))
                                       : static_cast<Acc>(loadAsDouble(pb, bt, ob + i * sb));
                   T::store(po, oo + i * so, static_cast<Acc>(f(T::load(po, oo + i * so), bv)));
                 }
               });
  });
}

/// out[i] = f(out[i]) over a contiguous tensor, in its accumulation type (f gets a value of
/// that type; an f that computes in double is rounded to it, then stored: float16/bfloat16
/// round from float as PyTorch's kernels, which compute in float, do).
template <typename F>
void mapInPlace(const Tensor& out, F&& f) {
  dispatchArithmetic(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using Acc = typename T::Acc;
    void* po = out.dataPtr();
    const int64_t n = out.numel();
    for (int64_t i = 0; i < n; ++i) T::store(po, i, static_cast<Acc>(f(T::load(po, i))));
  });
}

/// A gradient reduced to an input's sizes (at::sum_to) and cast to its dtype (what PyTorch's
/// engine does in validate_outputs when an op promoted the input).
/// The staging buffers PyTorch's CUDA reduction kernel takes and gives back while it reduces `t`
/// over the dims marked in `reduced` (core/memory/reduction_temporaries.h), on the allocator of
/// t's device; nothing for a tensor without a modelled device. Call it after the output exists.
void replayReductionTemporaries(const Tensor& t, const std::vector<bool>& reduced);

inline Tensor gradTo(const Tensor& g, const Shape& sizes, DType dtype) {
  Tensor r = sumTo(g, sizes);
  return r.dtype() == dtype ? r : toDType(r, dtype);
}

/// The autograd engine's validate_outputs (torch/csrc/autograd/engine.cpp) after a node's
/// formulas: each defined gradient, in input order, summed to its input's `sizes` and cast to
/// its `dtypes`; the unreduced gradient is freed once its reduced one exists.
inline void reduceGradsInOrder(std::vector<Tensor>& grads, const std::vector<Shape>& sizes,
                               const std::vector<DType>& dtypes) {
  for (size_t i = 0; i < grads.size() && i < sizes.size(); ++i) {
    if (!grads[i].defined()) continue;
    Tensor reduced = gradTo(grads[i], sizes[i], dtypes[i]);
    grads[i] = std::move(reduced);
  }
}

/// An op's output as its node saves it: a second handle on the same storage without the
/// grad_fn (PyTorch's SavedVariable for an output), so node and output hold no cycle.
inline Tensor savedOutput(const Tensor& out) {
  return makeView(out, out.sizes(), out.strides(), out.storageOffset());
}

}  // namespace matmulviz::detail
