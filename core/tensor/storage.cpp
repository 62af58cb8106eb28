#include "core/tensor/storage.h"

namespace matmulviz {

std::shared_ptr<Storage> Storage::onDevice(DevicePtr device, int64_t bytes,
                                           const std::string& label) {
  std::shared_ptr<Storage> s(new Storage());
  if (bytes == 0) {
    // The caching allocator hands out nothing for 0 bytes (NativeCachingAllocator::allocate):
    // memory_allocated does not change. A non-null address keeps hasData() true on cpu.
    static std::byte placeholder[1];
    s->data_ = device->hasData() ? placeholder : nullptr;
    s->device_ = std::move(device);
    s->hostLabel_ = label;
    return s;
  }
  const auto a = device->allocator().allocate(bytes, label);
  s->device_ = std::move(device);
  s->allocationId_ = a.id;
  s->data_ = a.ptr;
  s->nbytes_ = bytes;
  s->device_->registerStorage(a.id, s.get());
  return s;
}

std::shared_ptr<Storage> Storage::onHost(int64_t bytes) {
  std::shared_ptr<Storage> s(new Storage());
  s->host_ = std::make_unique<std::byte[]>(static_cast<std::size_t>(bytes > 0 ? bytes : 1));
  s->data_ = s->host_.get();
  s->nbytes_ = bytes;
  return s;
}

Storage::~Storage() {
  if (device_ && allocationId_ >= 0) {
    device_->unregisterStorage(allocationId_);
    device_->allocator().free(allocationId_);
  }
}

std::string Storage::label() const {
  if (!device_ || allocationId_ < 0) return hostLabel_;
  return device_->allocator().record(allocationId_).label;
}

void Storage::setLabel(const std::string& label) {
  if (device_ && allocationId_ >= 0)
    device_->allocator().setLabel(allocationId_, label);
  else
    hostLabel_ = label;
}

MemoryCategory Storage::category() const {
  if (!device_ || allocationId_ < 0) return MemoryCategory::Other;
  return device_->allocator().record(allocationId_).category;
}

void Storage::setCategory(MemoryCategory category) {
  if (device_ && allocationId_ >= 0) device_->allocator().setCategory(allocationId_, category);
}

void Storage::addHolder(const std::string& why) {
  ++holders_[why];
  if (device_ && allocationId_ >= 0) device_->allocator().notifyHolder(allocationId_, why, +1);
}

void Storage::removeHolder(const std::string& why) {
  auto it = holders_.find(why);
  if (it == holders_.end()) return;
  if (--it->second == 0) holders_.erase(it);
  if (device_ && allocationId_ >= 0) device_->allocator().notifyHolder(allocationId_, why, -1);
}

}  // namespace matmulviz
