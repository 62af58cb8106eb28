#pragma once
// A simulated device: the place tensors live and the caching-allocator model that accounts for
// them. kind Host is plain host memory outside the accounting (a CPU index tensor such as the
// seed's q, float64 references); Cpu, Meta and Cuda tensors go through the allocator model.

#include "core/memory/caching_allocator.h"
#include "core/tensor/compute_backend.h"

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

namespace matmulviz {

class Storage;

enum class DeviceKind : uint8_t {
  Host,  ///< host memory, not accounted (like a CPU tensor beside a CUDA device in PyTorch)
  Cpu,   ///< arithmetic on this machine (BLAS); memory accounted as a CUDA device's would be
  Meta,  ///< sizes, strides and accounting only: no data, no arithmetic (PyTorch's meta)
  Cuda,  ///< a real CUDA device (kernels/cuda)
};

std::string_view deviceKindName(DeviceKind k);
/// Parses "cpu", "meta", "cuda". Throws std::invalid_argument naming the allowed values.
DeviceKind parseDeviceKind(std::string_view name);

class DeviceContext {
 public:
  /// `backing` (and `compute`, when given) must outlive this context. Without `compute` the
  /// host does the arithmetic on the segments' memory (cpu); with it, the memory is the
  /// backend's and only its primitives touch it (cuda, simulated cuda).
  DeviceContext(DeviceKind kind, SegmentBacking& backing, CachingAllocator::Options options,
                ComputeBackend* compute = nullptr)
      : kind_(kind), backing_(backing), allocator_(backing, options), compute_(compute) {}
  DeviceKind kind() const { return kind_; }
  bool hasData() const { return backing_.hasData(); }
  /// The backend that computes on this device's memory; null when the host does (cpu, meta).
  ComputeBackend* compute() const { return compute_; }
  /// Waits for the device's queued work (a GPU's kernels run asynchronously), so that a host
  /// clock read next measures it. Nothing to wait for on a device without a ComputeBackend.
  void synchronize() const {
    if (compute_) compute_->synchronize();
  }
  CachingAllocator& allocator() { return allocator_; }
  const CachingAllocator& allocator() const { return allocator_; }

  /// Live storages by allocation id, so reports can ask a block who holds it.
  void registerStorage(int64_t allocationId, const Storage* s) { storages_[allocationId] = s; }
  void unregisterStorage(int64_t allocationId) { storages_.erase(allocationId); }
  const Storage* storageOf(int64_t allocationId) const {
    auto it = storages_.find(allocationId);
    return it == storages_.end() ? nullptr : it->second;
  }

 private:
  std::unordered_map<int64_t, const Storage*> storages_;
  DeviceKind kind_;
  SegmentBacking& backing_;
  CachingAllocator allocator_;
  ComputeBackend* compute_ = nullptr;
};

using DevicePtr = std::shared_ptr<DeviceContext>;

/// Makes a run's device from its allocator options: what a caller passes to run on a device the
/// engine cannot make itself (a GPU: kernels/cuda/cuda_device.h makeCudaDevice).
using DeviceFactory = std::function<DevicePtr(CachingAllocator::Options)>;

/// A fresh device with a new allocator model: `factory`'s when one is given, else the engine's
/// own device of `kind` (cpu: memory in host RAM; meta: no memory). Throws
/// BadInput (field "device") for another kind without a factory (a cuda device comes from the CUDA
/// backend: kernels/cuda/cuda_device.h).
DevicePtr makeDevice(DeviceKind kind, CachingAllocator::Options options,
                     const DeviceFactory& factory = {});

/// Names the op that allocations and timeline events belong to while it is alive:
/// `OpScope op(device, "bmm");`. Restores the previous op on exit. Null device: no-op.
class OpScope {
 public:
  OpScope(DeviceContext* device, const std::string& opName) : device_(device) {
    if (device_) device_->allocator().pushOp(opName);
  }
  ~OpScope() {
    if (device_) device_->allocator().popOp();
  }
  OpScope(const OpScope&) = delete;
  OpScope& operator=(const OpScope&) = delete;

 private:
  DeviceContext* device_;
};

/// Gives the allocations made on `device` while it is alive `category` unless their code says
/// otherwise (autograd's backward: gradients). Restores the previous default on exit. Null
/// device: no-op.
class CategoryScope {
 public:
  CategoryScope(DeviceContext* device, MemoryCategory category) : device_(device) {
    if (device_) previous_ = device_->allocator().setDefaultCategory(category);
  }
  ~CategoryScope() {
    if (device_) device_->allocator().setDefaultCategory(previous_);
  }
  CategoryScope(const CategoryScope&) = delete;
  CategoryScope& operator=(const CategoryScope&) = delete;

 private:
  DeviceContext* device_;
  MemoryCategory previous_ = MemoryCategory::Other;
};

}  // namespace matmulviz
