#include "core/tensor/tensor.h"

#include "core/autograd/node.h"

#include <algorithm>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace matmulviz {

namespace {
int64_t checkedDim(int64_t d, int64_t dim) {
  const int64_t w = d < 0 ? d + dim : d;
  if (w < 0 || w >= dim)
    throw std::out_of_range("dimension " + std::to_string(d) + " out of range for a " +
                            std::to_string(dim) + "-d tensor");
  return w;
}
}  // namespace

int64_t Tensor::size(int64_t d) const {
  return impl_->sizes[checkedDim(d, dim())];
}
int64_t Tensor::stride(int64_t d) const {
  return impl_->strides[checkedDim(d, dim())];
}
int64_t Tensor::numel() const {
  return numelOf(impl_->sizes);
}

bool Tensor::isContiguous() const {
  if (numel() == 0) return true;  // as c10's compute_contiguous
  int64_t expected = 1;
  for (int64_t d = dim() - 1; d >= 0; --d) {
    if (impl_->sizes[d] == 1) continue;
    if (impl_->strides[d] != expected) return false;
    expected *= impl_->sizes[d];
  }
  return true;
}

void* Tensor::dataPtr() const {
  void* base = impl_->storage->data();
  if (!base) return nullptr;
  return static_cast<char*>(base) + impl_->storageOffset * elementSize();
}

Tensor& Tensor::setRequiresGrad(bool on) {
  if (!isLeaf())
    throw std::logic_error(
        "you can only change requires_grad flags of leaf variables (this tensor has a grad_fn)");
  if (on && !isFloating(dtype()))
    throw std::invalid_argument("only floating point tensors can require gradients");
  impl_->requiresGrad = on;
  return *this;
}

const Tensor& Tensor::setCategory(MemoryCategory category) const {
  impl_->storage->setCategory(category);
  return *this;
}

const Tensor& Tensor::setLabel(const std::string& label) const {
  impl_->storage->setLabel(label);
  return *this;
}

double Tensor::item(int64_t flatIndex) const {
  if (!hasData()) throw std::logic_error("item() of a meta tensor: it has no data");
  if (compute())
    throw std::logic_error("item() of a tensor in " + compute()->name() +
                           " memory: copy it to the host first");
  int64_t offset = 0;
  for (int64_t d = dim() - 1; d >= 0; --d) {
    const int64_t s = impl_->sizes[d];
    offset += (flatIndex % s) * impl_->strides[d];
    flatIndex /= s;
  }
  return loadAsDouble(dataPtr(), dtype(), offset);
}

std::vector<double> Tensor::toDoubles() const {
  std::vector<double> out;
  if (!hasData()) return out;
  if (compute())
    throw std::logic_error("toDoubles() of a tensor in " + compute()->name() +
                           " memory: copy it to the host first");
  const int64_t n = numel();
  out.resize(static_cast<size_t>(n));
  if (isContiguous()) {
    for (int64_t i = 0; i < n; ++i) out[i] = loadAsDouble(dataPtr(), dtype(), i);
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = item(i);
  }
  return out;
}

std::string Tensor::shapeString() const {
  return shapeToString(impl_->sizes);
}

Shape contiguousStrides(const Shape& sizes) {
  Shape strides(sizes.size());
  int64_t s = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    strides[d] = s;
    s *= std::max<int64_t>(sizes[d], 1);
  }
  return strides;
}

int64_t numelOf(const Shape& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

std::string shapeToString(const Shape& sizes) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < sizes.size(); ++i) os << (i ? ", " : "") << sizes[i];
  os << "]";
  return os.str();
}

Tensor empty(const Shape& sizes, DType dtype, const DevicePtr& device, const std::string& label) {
  for (int64_t s : sizes)
    if (s < 0)
      throw std::invalid_argument("Trying to create tensor with negative dimension " +
                                  std::to_string(s) + ": " + shapeToString(sizes));
  auto impl = std::make_shared<TensorImpl>();
  const int64_t bytes = numelOf(sizes) * elementSize(dtype);
  impl->storage = device ? Storage::onDevice(device, bytes, label) : Storage::onHost(bytes);
  if (!device) impl->storage->setLabel(label);
  impl->sizes = sizes;
  impl->strides = contiguousStrides(sizes);
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

Tensor zeros(const Shape& sizes, DType dtype, const DevicePtr& device, const std::string& label) {
  Tensor t = empty(sizes, dtype, device, label);
  if (!t.hasData() || t.numel() == 0) return t;
  if (ComputeBackend* be = t.compute())
    be->fillZero(t);
  else
    std::memset(t.dataPtr(), 0, static_cast<size_t>(t.nbytes()));
  return t;
}

Tensor fromDoubles(const Shape& sizes, const std::vector<double>& values, DType dtype) {
  if (static_cast<int64_t>(values.size()) != numelOf(sizes))
    throw std::invalid_argument("fromDoubles: " + std::to_string(values.size()) +
                                " values for shape " + shapeToString(sizes));
  Tensor t = empty(sizes, dtype, nullptr, "");
  for (size_t i = 0; i < values.size(); ++i)
    storeFromDouble(t.dataPtr(), dtype, static_cast<int64_t>(i), values[i]);
  return t;
}

Tensor makeView(const Tensor& base, Shape sizes, Shape strides, int64_t storageOffset) {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = base.storagePtr();
  impl->sizes = std::move(sizes);
  impl->strides = std::move(strides);
  impl->storageOffset = storageOffset;
  impl->dtype = base.dtype();
  return Tensor(std::move(impl));
}

}  // namespace matmulviz
