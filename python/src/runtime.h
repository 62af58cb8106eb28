#pragma once
// The process-wide state behind `matmulviz.torch`: the one simulated CUDA device ("cuda",
// "cuda:0") that every CUDA tensor of a script lives on, its mode and its capacity.
//
// Python's device names map to the engine's devices (core/tensor/device.h):
//   "cpu"  -> host memory, not accounted (a CPU tensor beside a CUDA device in PyTorch);
//   "cuda" -> one device whose memory is the CUDA caching-allocator model. In mode "data"
//             (the default) its values are computed on this machine (BLAS); in mode "meta" it
//             keeps sizes, strides and the memory accounting but no data.

#include "core/tensor/device.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace matmulviz::python {

enum class CudaMode { Data, Meta };

class Runtime {
 public:
  static Runtime& instance();

  /// The simulated CUDA device, made on first use.
  const DevicePtr& cuda();
  /// The device a Python device string names: null for "cpu", the CUDA device for "cuda" and
  /// "cuda:0". Throws std::invalid_argument (RuntimeError) for anything else, in PyTorch's words.
  DevicePtr parseDevice(const std::string& name);
  /// "cpu" or "cuda:0": the Python name of the device a storage is on.
  static std::string deviceName(const DeviceContext* device);

  CudaMode mode() const { return mode_; }
  /// Switches mode and/or capacity: the next CUDA tensor gets a new device with fresh statistics.
  /// Tensors made before keep the device they were made on (and its memory); mixing the two in
  /// one op fails as tensors on two devices do. Call these at the start of a script.
  void setMode(CudaMode mode);
  void setCapacity(std::optional<int64_t> bytes);
  std::optional<int64_t> capacity() const { return capacity_; }
  /// torch.cuda.set_per_process_memory_fraction(f): capacity * f (needs a capacity).
  void setMemoryFraction(double fraction);
  /// Which PyTorch on which GPU the device models (core/memory/pytorch_model.h; default PyTorch
  /// 2.x on an H200): the next CUDA tensor gets a new device, as with setMode.
  void setPyTorchModel(PyTorchModel model);
  const PyTorchModel& pytorchModel() const { return pytorch_; }
  /// Called with each new CUDA device (a mode or capacity change makes one): the recorder
  /// follows the device. Empty: nobody is told.
  void setDeviceObserver(std::function<void(const DevicePtr&)> observer) {
    deviceObserver_ = std::move(observer);
  }

 private:
  void replaceDevice();
  DevicePtr cuda_;
  CudaMode mode_ = CudaMode::Data;
  std::optional<int64_t> capacity_;
  std::optional<double> fraction_;
  PyTorchModel pytorch_ = defaultPyTorchModel();
  std::function<void(const DevicePtr&)> deviceObserver_;
};

/// The caching-allocator model of the process's CUDA device (Runtime::instance().cuda()).
CachingAllocator& cudaAllocator();

}  // namespace matmulviz::python
