#pragma once
// From the engine's tensors to the arguments of its kernels (kernels/engine/*_kernels.h): the
// host half of a ComputeBackend primitive, shared by the simulated device
// (simulated_backend.cpp) and the CUDA backend (kernels/cuda/cuda_compute_backend.cu), so both
// launch the same bodies with the same arguments. Views span each operand's whole storage.
// Throws std::invalid_argument for more than kMaxDims dims or a dtype the kernels lack.

#include <cstdint>
#include <string>

#include "core/tensor/tensor.h"
#include "kernels/engine/elementwise_kernels.h"
#include "kernels/engine/gather_bmm_kernels.h"
#include "kernels/engine/gemm_kernel.h"
#include "kernels/engine/index_kernels.h"
#include "kernels/engine/reduce_kernel.h"

namespace matmulviz::kernels::engine {

/// Threads per block of every engine launch (1-d grids).
inline constexpr int kEngineBlock = 256;
/// Kernel 08's TPB in the engine: (16, 16) blocks for the product, 256 threads for the rest.
inline constexpr int kGroupedBmmTpb = 16;

/// t's sizes, strides and storage offset (throws above kMaxDims dims).
Strided layoutOf(const Tensor& t);
/// Elements of t's storage (the extent a view of it may address).
std::int64_t storageElements(const Tensor& t);

/// A 1-d view of t's whole storage as T (T's size must be t's element size).
template <class T>
sim::GlobalView<T> storageView(const Tensor& t, int id, const char* name) {
  return sim::view1d(static_cast<T*>(t.storage().data()), storageElements(t), id, name);
}

/// Calls fn(T{}) with T = float or double for t's dtype; throws for others, naming `op`.
template <class F>
void dispatchArithmetic(DType dtype, const std::string& op, F&& fn) {
  switch (dtype) {
    case DType::Float32:
      return fn(float{});
    case DType::Float64:
      return fn(double{});
    default:
      break;
  }
  throw std::invalid_argument(op + ": " + std::string(dtypeName(dtype)) +
                              " is not supported on a device with its own memory yet "
                              "(float32 and float64 are); run it on the cpu device");
}

/// Calls fn(TD{}, TS{}) with the storage types of a copy from `src` to `dst` dtypes: same-dtype
/// copies of any width, and float32 <-> float64. Throws for other conversions.
template <class F>
void dispatchCopy(DType dst, DType src, F&& fn) {
  if (dst == src) {
    switch (elementSize(dst)) {
      case 1:  // bool
        return fn(std::uint8_t{}, std::uint8_t{});
      case 2:
        return fn(std::uint16_t{}, std::uint16_t{});
      case 4:
        return fn(float{}, float{});
      case 8:
        return dst == DType::Int64 ? fn(std::int64_t{}, std::int64_t{}) : fn(double{}, double{});
      default:
        break;
    }
  }
  if (dst == DType::Float32 && src == DType::Float64) return fn(float{}, double{});
  if (dst == DType::Float64 && src == DType::Float32) return fn(double{}, float{});
  throw std::invalid_argument("copy from " + std::string(dtypeName(src)) + " to " +
                              std::string(dtypeName(dst)) +
                              " is not supported on a device with its own memory yet");
}

template <class TD, class TS>
BinaryArgs<TD, TS> binaryArgs(const Tensor& dst, const Tensor& src) {
  BinaryArgs<TD, TS> p;
  p.dst = storageView<TD>(dst, 0, "dst");
  p.src = storageView<const TS>(src, 1, "src");
  p.dstLayout = layoutOf(dst);
  p.srcLayout = layoutOf(src);
  p.n = dst.numel();
  return p;
}

/// sumInto's split of t's dims into kept dims (outStrides[d] != 0 or size 1) and summed ones.
template <class T>
SumArgs<T> sumArgs(const Tensor& out, const Shape& outStrides, const Tensor& t) {
  (void)layoutOf(t);  // throws above kMaxDims dims
  SumArgs<T> p;
  p.out = storageView<T>(out, 0, "out");
  p.t = storageView<const T>(t, 1, "t");
  p.keptT.offset = t.storageOffset();
  p.keptOut.offset = out.storageOffset();
  for (int64_t d = 0; d < t.dim(); ++d) {
    const bool summed = outStrides[d] == 0 && t.size(d) != 1;
    Strided& into = summed ? p.summed : p.keptT;
    into.sizes[into.rank] = t.size(d);
    into.strides[into.rank] = t.stride(d);
    ++into.rank;
    if (!summed) {
      p.keptOut.sizes[p.keptOut.rank] = t.size(d);
      p.keptOut.strides[p.keptOut.rank++] = outStrides[d];
    }
  }
  p.n = p.keptT.numel();
  return p;
}

template <class T>
GemmArgs<T> gemmArgs(const Tensor& out, const Tensor& a, const Tensor& b) {
  GemmArgs<T> g;
  g.out = storageView<T>(out, 0, "out");
  g.a = storageView<const T>(a, 1, "a");
  g.b = storageView<const T>(b, 2, "b");
  g.aLayout = layoutOf(a);
  g.bLayout = layoutOf(b);
  g.outOffset = out.storageOffset();
  g.B = a.size(0);
  g.n = a.size(1);
  g.m = a.size(2);
  g.p = b.size(2);
  return g;
}

/// indexRows (gather, src = t) or indexAddRows (scatter, src = g).
template <class T>
IndexArgs<T> indexArgs(const Tensor& out, const Tensor& src, const Tensor& index, bool gather) {
  IndexArgs<T> p;
  p.out = storageView<T>(out, 0, "out");
  p.src = storageView<const T>(src, 1, gather ? "t" : "grad");
  p.index = storageView<const std::int64_t>(index, 2, "index");
  p.indexOffset = index.storageOffset();
  p.outOffset = out.storageOffset();
  const Tensor& rowsOf = gather ? src : out;
  p.rows = rowsOf.size(0);
  p.count = index.numel();
  p.inner = rowsOf.dim() <= 1 ? 1 : rowsOf.numel() / std::max<int64_t>(rowsOf.size(0), 1);
  if (gather) {
    p.srcRow = layoutOf(src);  // drop dim 0: its stride goes to srcRowStride
    p.srcRowStride = src.stride(0);
    for (int d = 1; d < p.srcRow.rank; ++d) {
      p.srcRow.sizes[d - 1] = p.srcRow.sizes[d];
      p.srcRow.strides[d - 1] = p.srcRow.strides[d];
    }
    p.srcRow.rank -= 1;
  } else {
    p.srcRow = layoutOf(src);
  }
  return p;
}

/// Forward (x = a, y = c), gradA (x = dO, y = c) or gradC (x = a, y = dO); sizes from a [N, I,
/// J] or dA, and c [M, J, K] or dC.
template <class T>
GatherBmmOperands<T> gatherBmmArgs(const Tensor& out, const Tensor& x, const Tensor& y,
                                   const Tensor& q, std::int64_t N, std::int64_t I, std::int64_t J,
                                   std::int64_t K) {
  GatherBmmOperands<T> p;
  p.out = storageView<T>(out, 0, "out");
  p.x = storageView<const T>(x, 1, "x");
  p.y = storageView<const T>(y, 2, "y");
  p.q = storageView<const std::int64_t>(q, 3, "q");
  p.xLayout = layoutOf(x);
  p.yLayout = layoutOf(y);
  p.qOffset = q.storageOffset();
  p.qStride = q.stride(0);
  p.outOffset = out.storageOffset();
  p.N = N;
  p.I = I;
  p.J = J;
  p.K = K;
  return p;
}

}  // namespace matmulviz::kernels::engine
