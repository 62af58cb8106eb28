#include "kernels/engine/simulated_backend.h"

#include <cstring>
#include <stdexcept>

#include "kernels/engine/engine_backend_impl.h"

namespace matmulviz::kernels::engine {

void SimulatedComputeBackend::transfer(const Tensor& dst, const Tensor& src, std::int64_t bytes,
                                       bool /*toDevice*/) {
  OpenDeviceMemory open(memory_);  // the host side is plain memory
  std::memcpy(dst.dataPtr(), src.dataPtr(), static_cast<std::size_t>(bytes));
}

namespace {
/// The memory, the backend and the context, kept alive together.
struct SimulatedDevice {
  GuardedSegmentBacking memory;
  SimulatedComputeBackend backend{memory};
  std::shared_ptr<DeviceContext> context;
};
}  // namespace

DevicePtr makeSimulatedCudaDevice(CachingAllocator::Options options) {
  auto holder = std::make_shared<SimulatedDevice>();
  holder->context =
      std::make_shared<DeviceContext>(DeviceKind::Cuda, holder->memory, options, &holder->backend);
  return DevicePtr(holder, holder->context.get());
}

template class EngineBackend<SimulatedComputeBackend>;

}  // namespace matmulviz::kernels::engine
