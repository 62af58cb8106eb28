#pragma once
// Definitions of EngineBackend<Device> (engine_backend.h). Include only where
// `template class EngineBackend<Device>;` instantiates it (the Device's own source file), after
// Device's class definition.

#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "core/ops/grouped_bmm_rule.h"
#include "kernels/04_gather_bmm.h"
#include "kernels/engine/engine_args.h"
#include "kernels/engine/engine_backend.h"
#include "kernels/engine/engine_ops.h"

namespace matmulviz::kernels::engine {

namespace detail {

inline std::string placeOf(const Tensor& t) {
  return t.compute() ? "on " + t.compute()->name() : std::string("in host memory");
}

/// t's first element as T* (T of t's element width): its storage from its offset.
template <class T>
T* elementsOf(const Tensor& t) {
  return static_cast<T*>(t.storage().data()) + t.storageOffset();
}

inline void requireInt64(const Tensor& t, const char* op, const char* name) {
  if (t.dtype() != DType::Int64)
    throw std::invalid_argument(std::string(op) + ": " + name + " must be int64, got " +
                                std::string(dtypeName(t.dtype())));
}

}  // namespace detail

template <class Device>
void EngineBackend<Device>::requireOnDevice(const Tensor& t, const char* op,
                                            const char* what) const {
  if (t.compute() == this) return;
  throw std::invalid_argument(std::string(op) + ": " + what + " is not on this " + this->name() +
                              " device (it is " + detail::placeOf(t) + "); move it there first");
}

template <class Device>
template <class Op, class Args>
void EngineBackend<Device>::launchOp(std::int64_t n, const Args& args) {
  if (n <= 0) return;
  const std::int64_t blocks = (n + kEngineBlock - 1) / kEngineBlock;
  if (blocks > std::numeric_limits<int>::max())
    throw std::invalid_argument(std::string(Op::name) + ": " + std::to_string(n) +
                                " elements need more blocks than a 1-d CUDA grid has");
  device().template launch<Op>(static_cast<unsigned>(blocks), args);
}

template <class Device>
void EngineBackend<Device>::zeroByKernel(const Tensor& t) {
  dispatchCopy(t.dtype(), t.dtype(), [&](auto tag, auto) {
    using T = decltype(tag);
    launchOp<FillZeroOp>(t.numel(),
                         FillZeroArgs<T>{storageView<T>(t, 0, "t"), t.storageOffset(), t.numel()});
  });
}

template <class Device>
void EngineBackend<Device>::copy(const Tensor& dst, const Tensor& src) {
  if (dst.numel() != src.numel())
    throw std::invalid_argument("copy: " + dst.shapeString() + " from " + src.shapeString() +
                                ": the element counts differ");
  const bool dstHere = dst.compute() == this, srcHere = src.compute() == this;
  if (dstHere && srcHere) {
    dispatchCopy(dst.dtype(), src.dtype(), [&](auto dstTag, auto srcTag) {
      using TD = decltype(dstTag);
      using TS = decltype(srcTag);
      launchOp<CopyOp>(dst.numel(), binaryArgs<TD, TS>(dst, src));
    });
    return;
  }
  const Tensor& other = dstHere ? src : dst;
  if ((!dstHere && !srcHere) || other.compute() != nullptr)
    throw std::invalid_argument("copy: one side must be on this " + this->name() +
                                " device and the other in host memory (dst is " +
                                detail::placeOf(dst) + ", src " + detail::placeOf(src) +
                                "); copy through the host");
  if (dst.dtype() != src.dtype() || !dst.isContiguous() || !src.isContiguous())
    throw std::invalid_argument(
        std::string("copy: a transfer ") + (dstHere ? "to" : "from") + " the " + this->name() +
        " device takes contiguous tensors of one dtype (got " +
        std::string(dtypeName(src.dtype())) + (src.isContiguous() ? "" : " strided") + " to " +
        std::string(dtypeName(dst.dtype())) + (dst.isContiguous() ? "" : " strided") +
        "); make it contiguous and convert it on one side first");
  const std::int64_t bytes = dst.nbytes();
  if (bytes == 0) return;
  if (other.dataPtr() == nullptr)
    throw std::invalid_argument("copy: the host side has no data (a meta tensor?)");
  device().transfer(dst, src, bytes, dstHere);
}

template <class Device>
void EngineBackend<Device>::fillZero(const Tensor& t) {
  requireOnDevice(t, "fill_", "the tensor");
  if (!t.isContiguous())
    throw std::invalid_argument("fill_: the tensor must be contiguous, got a strided view of " +
                                t.shapeString());
  if (t.nbytes() > 0) device().zeroBytes(t);
}

template <class Device>
void EngineBackend<Device>::addInPlace(const Tensor& a, const Tensor& b) {
  requireOnDevice(a, "add_", "self");
  requireOnDevice(b, "add_", "other");
  dispatchArithmetic(a.dtype(), "add_", [&](auto tag) {
    using T = decltype(tag);
    launchOp<AddOp>(a.numel(), binaryArgs<T, T>(a, b));
  });
}

template <class Device>
void EngineBackend<Device>::mulInPlace(const Tensor& a, const Tensor& b) {
  requireOnDevice(a, "mul_", "self");
  requireOnDevice(b, "mul_", "other");
  dispatchArithmetic(a.dtype(), "mul_", [&](auto tag) {
    using T = decltype(tag);
    launchOp<MulOp>(a.numel(), binaryArgs<T, T>(a, b));
  });
}

template <class Device>
void EngineBackend<Device>::sumInto(const Tensor& out, const Shape& outStrides, const Tensor& t) {
  requireOnDevice(out, "sum", "out");
  requireOnDevice(t, "sum", "the input");
  if (static_cast<std::int64_t>(outStrides.size()) != t.dim())
    throw std::invalid_argument("sum: " + std::to_string(outStrides.size()) +
                                " output strides for a tensor of " + std::to_string(t.dim()) +
                                " dims");
  dispatchArithmetic(t.dtype(), "sum", [&](auto tag) {
    using T = decltype(tag);
    const SumArgs<T> p = sumArgs<T>(out, outStrides, t);  // throws above kMaxDims dims
    launchOp<SumOp>(p.n, p);
  });
}

template <class Device>
void EngineBackend<Device>::gemm(const Tensor& out, const Tensor& a, const Tensor& b) {
  requireOnDevice(out, "matmul", "out");
  requireOnDevice(a, "matmul", "self");
  requireOnDevice(b, "matmul", "other");
  const std::int64_t B = a.size(0), n = a.size(1), m = a.size(2), p = b.size(2);
  if (B == 0 || n == 0 || p == 0) return;
  if (m == 0) return fillZero(out);  // an empty sum
  dispatchArithmetic(out.dtype(), "matmul", [&](auto tag) {
    using T = decltype(tag);
    if (device().gemmNative(out, a, b)) return;
    launchOp<GemmOp>(B * n * p, gemmArgs<T>(out, a, b));
  });
}

template <class Device>
void EngineBackend<Device>::indexRows(const Tensor& out, const Tensor& t, const Tensor& index) {
  requireOnDevice(out, "index", "out");
  requireOnDevice(t, "index", "self");
  requireOnDevice(index, "index", "the index");
  detail::requireInt64(index, "index", "the index");
  if (out.dtype() != t.dtype())
    throw std::invalid_argument("index: out is " + std::string(dtypeName(out.dtype())) +
                                " but self is " + std::string(dtypeName(t.dtype())));
  dispatchCopy(t.dtype(), t.dtype(), [&](auto tag, auto) {
    using T = decltype(tag);
    const IndexArgs<T> p = indexArgs<T>(out, t, index, /*gather=*/true);
    launchOp<IndexRowsOp>(p.count * p.inner, p);
  });
}

template <class Device>
void EngineBackend<Device>::indexAddRows(const Tensor& out, const Tensor& index, const Tensor& g) {
  requireOnDevice(out, "index_put_", "out");
  requireOnDevice(index, "index_put_", "the index");
  requireOnDevice(g, "index_put_", "the values");
  detail::requireInt64(index, "index_put_", "the index");
  dispatchArithmetic(out.dtype(), "index_put_", [&](auto tag) {
    using T = decltype(tag);
    const IndexArgs<T> p = indexArgs<T>(out, g, index, /*gather=*/false);
    launchOp<IndexAddRowsOp>(p.count * p.inner, p);
  });
}

template <class Device>
void EngineBackend<Device>::gatherBmm(const Tensor& out, const Tensor& a, const Tensor& c,
                                      const Tensor& q) {
  requireOnDevice(out, "gather_bmm", "out");
  requireOnDevice(a, "gather_bmm", "a");
  requireOnDevice(c, "gather_bmm", "c");
  requireOnDevice(q, "gather_bmm", "q");
  detail::requireInt64(q, "gather_bmm", "q");
  dispatchArithmetic(out.dtype(), "gather_bmm", [&](auto tag) {
    using T = decltype(tag);
    const std::int64_t N = a.size(0), I = a.size(1), J = a.size(2), K = c.size(2);
    launchOp<GatherBmmOp>(N * I * K, gatherBmmArgs<T>(out, a, c, q, N, I, J, K));
  });
}

template <class Device>
void EngineBackend<Device>::gatherBmmGrouped(const Tensor& out, const Tensor& a, const Tensor& c,
                                             const Tensor& q, const Tensor& buckets) {
  const char* op = "gather_bmm (grouped)";
  requireOnDevice(out, op, "out");
  requireOnDevice(a, op, "a");
  requireOnDevice(c, op, "c");
  requireOnDevice(q, op, "q");
  requireOnDevice(buckets, op, "the bucket workspace");
  detail::requireInt64(q, op, "q");
  if (!groupedBmmApplies(a, c, q) || out.dtype() != DType::Float32 || !out.isContiguous() ||
      !buckets.isContiguous() || buckets.dtype() != DType::Int64)
    throw std::invalid_argument(std::string(op) + ": the operands are not kernel 08's " +
                                "(float32, contiguous, c[m] within shared memory)");
  const std::int64_t N = a.size(0), I = a.size(1), J = a.size(2), M = c.size(0), K = c.size(2);
  if (buckets.numel() < GroupedBmmWorkspace::int64Elements(N, M))
    throw std::invalid_argument(std::string(op) + ": the bucket workspace is too small");
  using detail::elementsOf;
  const GroupedBmmArgs p = groupedBmmArgs(
      kernels::gatherBmmArgs(elementsOf<const float>(a), elementsOf<const float>(c),
                             elementsOf<const std::int64_t>(q), elementsOf<float>(out),
                             static_cast<int>(N), static_cast<int>(I), static_cast<int>(J),
                             static_cast<int>(K), static_cast<int>(M)),
      reinterpret_cast<int*>(elementsOf<std::int64_t>(buckets)));
  const GroupedBmmConfigs configs =
      GroupedBmmConfigs::of(p.g.N, p.g.J, p.g.K, p.g.M, kGroupedBmmTpb);
  device().zeroBytes(buckets);  // counts and cursor start at zero
  device().template launchShaped<GroupHistogramOp>(configs.histogram, p);
  device().template launchShaped<GroupOffsetsOp>(configs.offsets, p);
  device().template launchShaped<GroupScatterOp>(configs.scatter, p);
  device().template launchShaped<GroupedBmmOp>(configs.grouped, p);
}

template <class Device>
void EngineBackend<Device>::gatherBmmGradA(const Tensor& dA, const Tensor& dO, const Tensor& c,
                                           const Tensor& q) {
  requireOnDevice(dA, "gather_bmm backward", "dA");
  requireOnDevice(dO, "gather_bmm backward", "the output's gradient");
  requireOnDevice(c, "gather_bmm backward", "c");
  requireOnDevice(q, "gather_bmm backward", "q");
  detail::requireInt64(q, "gather_bmm backward", "q");
  dispatchArithmetic(dA.dtype(), "gather_bmm backward", [&](auto tag) {
    using T = decltype(tag);
    const std::int64_t N = dA.size(0), I = dA.size(1), J = dA.size(2), K = c.size(2);
    launchOp<GatherBmmGradAOp>(N * I * J, gatherBmmArgs<T>(dA, dO, c, q, N, I, J, K));
  });
}

template <class Device>
void EngineBackend<Device>::gatherBmmGradC(const Tensor& dC, const Tensor& a, const Tensor& dO,
                                           const Tensor& q) {
  requireOnDevice(dC, "gather_bmm backward", "dC");
  requireOnDevice(a, "gather_bmm backward", "a");
  requireOnDevice(dO, "gather_bmm backward", "the output's gradient");
  requireOnDevice(q, "gather_bmm backward", "q");
  detail::requireInt64(q, "gather_bmm backward", "q");
  dispatchArithmetic(dC.dtype(), "gather_bmm backward", [&](auto tag) {
    using T = decltype(tag);
    const std::int64_t N = a.size(0), I = a.size(1), J = a.size(2), K = dO.size(2);
    launchOp<GatherBmmGradCOp>(N * J * K, gatherBmmArgs<T>(dC, a, dO, q, N, I, J, K));
  });
}

}  // namespace matmulviz::kernels::engine
