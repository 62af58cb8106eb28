#include "python/src/runtime.h"

#include <cstdlib>
#include <stdexcept>
#include <string_view>

namespace matmulviz::python {

Runtime& Runtime::instance() {
  static Runtime* runtime = [] {
    auto* r = new Runtime();  // never destroyed: tensors may outlive module teardown
    if (const char* env = std::getenv("MATMULVIZ_CUDA_MODE");
        env && std::string_view(env) == "meta")
      r->mode_ = CudaMode::Meta;
    // The app and the CLI's Python runner pass their PyTorch model on this way.
    if (const char* env = std::getenv("MATMULVIZ_PYTORCH"))
      r->pytorch_.version = parsePyTorchVersion(env);
    if (const char* env = std::getenv("MATMULVIZ_GPU")) r->pytorch_.gpu = env;
    return r;
  }();
  return *runtime;
}

const DevicePtr& Runtime::cuda() {
  if (!cuda_) {
    CachingAllocator::Options options;
    if (capacity_)
      options.capacityBytes =
          fraction_ ? static_cast<int64_t>(*capacity_ * *fraction_) : *capacity_;
    options.recordTimeline = false;  // matmulviz.record switches it on while it records
    options.pytorch = pytorch_;
    cuda_ = makeDevice(mode_ == CudaMode::Meta ? DeviceKind::Meta : DeviceKind::Cpu, options);
    if (deviceObserver_) deviceObserver_(cuda_);
  }
  return cuda_;
}

DevicePtr Runtime::parseDevice(const std::string& name) {
  if (name == "cpu") return nullptr;
  if (name == "cuda" || name == "cuda:0") return cuda();
  if (name.rfind("cuda:", 0) == 0)
    throw std::invalid_argument(
        "CUDA error: invalid device ordinal (matmulviz simulates one "
        "CUDA device, cuda:0)");
  // PyTorch's list of device types (c10/core/Device.cpp, 1.13); matmulviz runs cpu and cuda.
  throw std::invalid_argument(
      "Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, ort, "
      "xla, lazy, vulkan, mps, meta, hpu, privateuseone device type at start of device string: " +
      name);
}

std::string Runtime::deviceName(const DeviceContext* device) {
  return device ? "cuda:0" : "cpu";
}

void Runtime::replaceDevice() {
  cuda_.reset();  // tensors made before keep the device they were made on
}

void Runtime::setMode(CudaMode mode) {
  if (mode == mode_) return;
  replaceDevice();
  mode_ = mode;
}

void Runtime::setPyTorchModel(PyTorchModel model) {
  model.architecture();  // throws for an unknown GPU before anything changes
  if (model.version == pytorch_.version && model.gpu == pytorch_.gpu &&
      model.cublasWorkspaceConfig == pytorch_.cublasWorkspaceConfig)
    return;
  replaceDevice();
  pytorch_ = std::move(model);
}

void Runtime::setCapacity(std::optional<int64_t> bytes) {
  replaceDevice();
  capacity_ = bytes;
}

void Runtime::setMemoryFraction(double fraction) {
  if (!(fraction >= 0.0 && fraction <= 1.0))
    throw std::invalid_argument("Invalid fraction value: " + std::to_string(fraction) +
                                ". Allowed range: 0~1");
  replaceDevice();
  fraction_ = fraction;
}

CachingAllocator& cudaAllocator() {
  return Runtime::instance().cuda()->allocator();
}

}  // namespace matmulviz::python
