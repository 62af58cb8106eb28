// Copies: copyInto, contiguous, clone, toDevice, toDType, and the in-place addInPlace (add is in
// binary.cpp).
#include "core/autograd/grad_mode.h"
#include "core/autograd/node.h"
#include "core/ops/ops.h"
#include "core/ops/shape_rules.h"
#include "core/ops/strided_loop.h"

#include <cstring>
#include <stdexcept>

namespace matmulviz {

namespace {

void checkSameShape(const Tensor& a, const Tensor& b, const char* op) {
  if (a.sizes() != b.sizes())
    throw std::invalid_argument(std::string(op) + ": shapes " + a.shapeString() + " and " +
                                b.shapeString() + " differ");
}

class CloneBackward final : public Node {
 public:
  std::string name() const override { return "CloneBackward0"; }
  TensorList apply(TensorList&& g) override { return {std::move(g[0])}; }
};

class ToCopyBackward final : public Node {
 public:
  ToCopyBackward(DevicePtr device, DType dtype) : device_(std::move(device)), dtype_(dtype) {}
  std::string name() const override { return "ToCopyBackward0"; }
  TensorList apply(TensorList&& g) override {
    Tensor out = empty(g[0].sizes(), dtype_, device_, "grad (to input's device)");
    copyInto(out, g[0]);
    return {out};
  }

 private:
  DevicePtr device_;
  DType dtype_;
};

/// A transfer between the host and a device whose sides differ in dtype or layout, as
/// PyTorch's copy_ between devices does it (aten/src/ATen/native/cuda/Copy.cu): converted and
/// packed on the device into a contiguous temporary (the allocator sees it), packed on the host
/// in plain memory, then moved in one piece.
void stagedTransfer(ComputeBackend& be, const Tensor& dst, const Tensor& src) {
  if (src.compute()) {  // device -> host
    OpScope op(src.device(), "copy_");
    const Tensor staged =
        empty(src.sizes(), dst.dtype(), src.storage().devicePtr(), "copy_ staging");
    be.copy(staged, src);
    if (dst.isContiguous()) {
      be.copy(dst, staged);
    } else {
      const Tensor host = empty(dst.sizes(), dst.dtype(), nullptr, "copy_ staging");
      be.copy(host, staged);
      copyInto(dst, host);
    }
    return;
  }
  OpScope op(dst.device(), "copy_");  // host -> device
  const Tensor host = empty(src.sizes(), src.dtype(), nullptr, "copy_ staging");
  copyInto(host, src);
  const Tensor staged = empty(dst.sizes(), src.dtype(), dst.storage().devicePtr(), "copy_ staging");
  be.copy(staged, host);
  be.copy(dst, staged);
}

}  // namespace

void copyInto(const Tensor& dst, const Tensor& src) {
  checkSameShape(dst, src, "copy_");
  if (!dst.hasData() || !src.hasData()) return;  // meta: nothing to move
  if (dst.numel() == 0) return;
  if (ComputeBackend* be = dst.compute() ? dst.compute() : src.compute()) {
    if (src.compute() && src.compute() != be)
      throw std::invalid_argument("copy_: tensors on two different devices with their own memory");
    const bool transfer = !dst.compute() || !src.compute();
    if (transfer && (dst.dtype() != src.dtype() || !dst.isContiguous() || !src.isContiguous()))
      stagedTransfer(*be, dst, src);
    else
      be->copy(dst, src);  // on the device, or a plain transfer to/from the host
    return;
  }
  char* d = static_cast<char*>(dst.dataPtr());
  const char* s = static_cast<const char*>(src.dataPtr());
  if (dst.dtype() == src.dtype()) {
    const int64_t es = dst.elementSize();
    if (dst.isContiguous() && src.isContiguous()) {
      std::memcpy(d, s, static_cast<size_t>(dst.nbytes()));
      return;
    }
    detail::forEachRun(dst.sizes(), dst.strides(), src.strides(),
                       [&](int64_t oa, int64_t ob, int64_t n, int64_t sa, int64_t sb) {
                         if (sa == 1 && sb == 1) {
                           std::memcpy(d + oa * es, s + ob * es, static_cast<size_t>(n * es));
                           return;
                         }
                         for (int64_t i = 0; i < n; ++i)
                           std::memcpy(d + (oa + i * sa) * es, s + (ob + i * sb) * es,
                                       static_cast<size_t>(es));
                       });
    return;
  }
  detail::forEachRun(dst.sizes(), dst.strides(), src.strides(),
                     [&](int64_t oa, int64_t ob, int64_t n, int64_t sa, int64_t sb) {
                       for (int64_t i = 0; i < n; ++i)
                         storeFromDouble(d, dst.dtype(), oa + i * sa,
                                         loadAsDouble(s, src.dtype(), ob + i * sb));
                     });
}

Tensor clone(const Tensor& t, MemoryFormat format) {
  OpScope op(t.device(), "clone");
  Tensor out = empty(t.sizes(), t.dtype(), t.storage().devicePtr(), "clone of " + t.label());
  if (format == MemoryFormat::Preserve && !t.isContiguous()) {
    // at::empty_strided(sizes, strides) when t is non-overlapping and dense, else empty_like's
    // infer_dense_strides: the same t.numel() elements, laid out in t's dim order.
    const Shape strides = isNonOverlappingAndDense(t.sizes(), t.strides())
                              ? t.strides()
                              : denseStridesLike(t.sizes(), {t.strides()});
    out = makeView(out, t.sizes(), strides, 0);
  }
  copyInto(out, t);
  if (anyRequiresGrad({&t})) {
    auto node = std::make_shared<CloneBackward>();
    node->nextEdges = {gradientEdge(t)};
    setHistory(out, node);
  }
  return out;
}

Tensor contiguous(const Tensor& t) {
  return t.isContiguous() ? t : clone(t, MemoryFormat::Contiguous);
}

Tensor toDevice(const Tensor& t, const DevicePtr& device, const std::string& label) {
  OpScope op(device.get(), "to");
  Tensor out = empty(t.sizes(), t.dtype(), device, label);
  copyInto(out, t);
  if (anyRequiresGrad({&t})) {
    auto node = std::make_shared<ToCopyBackward>(t.storage().devicePtr(), t.dtype());
    node->nextEdges = {gradientEdge(t)};
    setHistory(out, node);
  }
  return out;
}

Tensor hostReadable(const Tensor& t, const std::string& label) {
  if (!t.compute()) return t;
  NoGradGuard noGrad;
  return toDevice(t, nullptr, label);
}

Tensor toDType(const Tensor& t, DType dtype) {
  OpScope op(t.device(), "to");
  Tensor out = empty(t.sizes(), dtype, t.storage().devicePtr(), t.label());
  copyInto(out, t);
  if (isFloating(dtype) && anyRequiresGrad({&t})) {  // an int64/bool result has no grad_fn
    auto node = std::make_shared<ToCopyBackward>(t.storage().devicePtr(), t.dtype());
    node->nextEdges = {gradientEdge(t)};
    setHistory(out, node);
  }
  return out;
}

void addInPlace(const Tensor& a, const Tensor& b) {
  checkSameShape(a, b, "add_");
  if (!a.hasData() || !b.hasData()) return;
  if (a.dtype() != b.dtype()) throw std::invalid_argument("add_: dtypes differ");
  if (a.numel() == 0) return;
  if (ComputeBackend* be = a.compute()) {
    be->addInPlace(a, b);
    return;
  }
  detail::dispatchFloating(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    void* pa = a.dataPtr();
    const void* pb = b.dataPtr();
    detail::forEachRun(a.sizes(), a.strides(), b.strides(),
                       [&](int64_t oa, int64_t ob, int64_t n, int64_t sa, int64_t sb) {
                         for (int64_t i = 0; i < n; ++i)
                           T::store(pa, oa + i * sa,
                                    T::load(pa, oa + i * sa) + T::load(pb, ob + i * sb));
                       });
  });
}

}  // namespace matmulviz
