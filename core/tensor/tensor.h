#pragma once
// A strided view over a Storage, as in PyTorch: sizes, strides (in elements), storage_offset,
// dtype, and the autograd fields (requires_grad, grad_fn, grad). Copying a Tensor copies a
// handle: both name the same TensorImpl, as two Python names bound to one torch.Tensor.

#include "core/tensor/dtype.h"
#include "core/tensor/storage.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace matmulviz {

class Node;
class Tensor;
using Shape = std::vector<int64_t>;

struct TensorImpl {
  std::shared_ptr<Storage> storage;
  Shape sizes;
  Shape strides;
  int64_t storageOffset = 0;
  DType dtype = DType::Float32;
  bool requiresGrad = false;
  /// A view made in no_grad mode of a tensor that requires grad: PyTorch's view keeps its base
  /// (DifferentiableViewMeta, CreationMeta::NO_GRAD_MODE) and requires_grad() is
  /// `requires_grad_ || grad_fn_ || base_.requires_grad()` (torch/csrc/autograd/variable.h), but
  /// it has no grad_fn and no gradient accumulator: no gradient flows to it.
  bool requiresGradViaBase = false;
  std::shared_ptr<Node> gradFn;  ///< null for leaves
  uint32_t outputNr = 0;
  std::shared_ptr<TensorImpl> grad;     ///< .grad of a leaf
  std::weak_ptr<Node> gradAccumulator;  ///< AccumulateGrad of a leaf that requires grad
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return impl_ != nullptr; }
  const Shape& sizes() const { return impl_->sizes; }
  const Shape& strides() const { return impl_->strides; }
  int64_t storageOffset() const { return impl_->storageOffset; }
  int64_t dim() const { return static_cast<int64_t>(impl_->sizes.size()); }
  /// Size of dimension d; negative d counts from the end. Throws std::out_of_range.
  int64_t size(int64_t d) const;
  int64_t stride(int64_t d) const;
  int64_t numel() const;
  DType dtype() const { return impl_->dtype; }
  int64_t elementSize() const { return matmulviz::elementSize(impl_->dtype); }
  int64_t nbytes() const { return numel() * elementSize(); }
  bool isContiguous() const;

  Storage& storage() const { return *impl_->storage; }
  const std::shared_ptr<Storage>& storagePtr() const { return impl_->storage; }
  DeviceContext* device() const { return impl_->storage->device(); }
  DeviceKind deviceKind() const { return impl_->storage->kind(); }
  /// The backend whose primitives compute on this tensor's memory; null when the host does
  /// (host, cpu and meta tensors). See core/tensor/compute_backend.h.
  ComputeBackend* compute() const {
    const DeviceContext* d = device();
    return d ? d->compute() : nullptr;
  }
  /// False on the meta device: no data to read or write.
  bool hasData() const { return impl_->storage->data() != nullptr; }
  /// Address of element [0, ..., 0] (nullptr on meta).
  void* dataPtr() const;
  template <typename T>
  T* data() const {
    return static_cast<T*>(dataPtr());
  }

  bool requiresGrad() const { return impl_->requiresGrad || impl_->requiresGradViaBase; }
  /// Makes a leaf require grad (torch.Tensor.requires_grad_). Throws for non-leaves.
  Tensor& setRequiresGrad(bool on);
  bool isLeaf() const { return impl_->gradFn == nullptr; }
  const std::shared_ptr<Node>& gradFn() const { return impl_->gradFn; }
  uint32_t outputNr() const { return impl_->outputNr; }
  /// .grad of a leaf (undefined until a backward reached it).
  Tensor grad() const { return Tensor(impl_->grad); }
  void setGrad(const Tensor& g) { impl_->grad = g.impl_; }

  /// Runs backward from this tensor with `gradOutput` (same shape). See autograd/engine.h.
  void backward(const Tensor& gradOutput) const;

  /// The name of the storage's allocation ("c[q]") as shown in reports; sets it.
  std::string label() const { return impl_->storage->label(); }
  const Tensor& setLabel(const std::string& label) const;
  /// What the storage's allocation holds, as the Memory view stacks it (inputs, gathered copy,
  /// outputs, ...; core/memory/memory_category.h); sets it. No-op on host tensors.
  MemoryCategory category() const { return impl_->storage->category(); }
  const Tensor& setCategory(MemoryCategory category) const;

  /// Element at a flat index of the logical (row-major) order, as double. For tests and reports.
  /// Throws std::logic_error on meta and on a device with a compute backend (copy it to the
  /// host first: toDevice(t, nullptr, label)).
  double item(int64_t flatIndex = 0) const;
  /// All elements in row-major order as double (empty on meta).
  std::vector<double> toDoubles() const;
  std::string shapeString() const;

  const std::shared_ptr<TensorImpl>& impl() const { return impl_; }

 private:
  std::shared_ptr<TensorImpl> impl_;
};

/// Contiguous (row-major) strides for `sizes`.
Shape contiguousStrides(const Shape& sizes);
int64_t numelOf(const Shape& sizes);
std::string shapeToString(const Shape& sizes);

/// A new, uninitialised contiguous tensor on `device` (host when null), labelled `label`.
Tensor empty(const Shape& sizes, DType dtype, const DevicePtr& device, const std::string& label);
/// Same, zero-filled (torch.zeros).
Tensor zeros(const Shape& sizes, DType dtype, const DevicePtr& device, const std::string& label);
/// A host tensor holding `values` converted to `dtype`.
Tensor fromDoubles(const Shape& sizes, const std::vector<double>& values, DType dtype);
/// A new view on `base`'s storage (no autograd relation; ops use it to build views).
Tensor makeView(const Tensor& base, Shape sizes, Shape strides, int64_t storageOffset);

}  // namespace matmulviz
