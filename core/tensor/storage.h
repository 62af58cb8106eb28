#pragma once
// The bytes under one or more tensors. A device storage owns one block of the caching-allocator
// model (freed when the last tensor or saved reference goes away); a host storage owns a plain
// buffer. A storage knows who keeps it alive beyond user variables: autograd nodes that saved a
// tensor on it register a "holder" (e.g. "saved as mat2 of BmmBackward0 because a requires grad").

#include "core/tensor/device.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>

namespace matmulviz {

class Storage {
 public:
  /// Allocates `bytes` on `device` through its allocator model; throws OutOfMemoryError.
  static std::shared_ptr<Storage> onDevice(DevicePtr device, int64_t bytes,
                                           const std::string& label);
  /// Allocates `bytes` of zero-initialised host memory (not accounted).
  static std::shared_ptr<Storage> onHost(int64_t bytes);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  int64_t nbytes() const { return nbytes_; }
  /// Null for host storage.
  DeviceContext* device() const { return device_.get(); }
  const DevicePtr& devicePtr() const { return device_; }
  DeviceKind kind() const { return device_ ? device_->kind() : DeviceKind::Host; }
  int64_t allocationId() const { return allocationId_; }

  std::string label() const;
  void setLabel(const std::string& label);
  /// What the allocation holds (AllocationRecord::category); Other for host storage and empty
  /// allocations, which have no record. Setting it there does nothing.
  MemoryCategory category() const;
  void setCategory(MemoryCategory category);

  /// PyTorch's version counter, shared by every view of this storage: an in-place write by the
  /// user (Tensor.__setitem__) bumps it once; a tensor saved for backward remembers the value it
  /// had, so a backward that would read modified values fails instead (SavedTensor::get).
  uint64_t version() const { return version_; }
  void bumpVersion() { ++version_; }

  /// Registers / drops a holder; the device allocator's holder observer hears of both.
  void addHolder(const std::string& why);
  void removeHolder(const std::string& why);
  /// Why this storage is alive besides user references: description -> count.
  const std::map<std::string, int>& holders() const { return holders_; }

 private:
  Storage() = default;
  DevicePtr device_;
  int64_t allocationId_ = -1;
  void* data_ = nullptr;
  int64_t nbytes_ = 0;
  std::unique_ptr<std::byte[]> host_;
  std::string hostLabel_;
  std::map<std::string, int> holders_;
  uint64_t version_ = 0;
};

}  // namespace matmulviz
