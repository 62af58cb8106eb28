#pragma once
// A CUDA device simulated on the CPU: the engine's primitives (core/tensor/compute_backend.h)
// run as the same kernel bodies the CUDA backend launches (kernels/engine/*_kernels.h), through
// the simulated launcher (core/sim), one thread at a time, with every access bounds-checked.
// Device memory is guarded host memory (device_memory_guard.h), so an op that skips the backend
// crashes as on a GPU. Slow (about a million simulated threads per second): for tests of the
// engine's device path on machines without a GPU, at small sizes.

#include <cstdint>
#include <memory>
#include <string>

#include "core/sim/launch_config.h"
#include "core/sim/launcher.h"
#include "core/tensor/compute_backend.h"
#include "core/tensor/device.h"
#include "kernels/engine/device_memory_guard.h"

namespace matmulviz::kernels::engine {

class SimulatedComputeBackend final : public ComputeBackend {
 public:
  explicit SimulatedComputeBackend(GuardedSegmentBacking& memory) : memory_(memory) {}
  std::string name() const override { return "simulated cuda"; }
  void copy(const Tensor& dst, const Tensor& src) override;
  void fillZero(const Tensor& t) override;
  void addInPlace(const Tensor& a, const Tensor& b) override;
  void mulInPlace(const Tensor& a, const Tensor& b) override;
  void sumInto(const Tensor& out, const Shape& outStrides, const Tensor& t) override;
  void gemm(const Tensor& out, const Tensor& a, const Tensor& b) override;
  void indexRows(const Tensor& out, const Tensor& t, const Tensor& index) override;
  void indexAddRows(const Tensor& out, const Tensor& index, const Tensor& g) override;
  void gatherBmm(const Tensor& out, const Tensor& a, const Tensor& c, const Tensor& q) override;
  void gatherBmmGradA(const Tensor& dA, const Tensor& dO, const Tensor& c,
                      const Tensor& q) override;
  void gatherBmmGradC(const Tensor& dC, const Tensor& a, const Tensor& dO,
                      const Tensor& q) override;
  void synchronize() override {}

  /// Kernel launches so far (tests check that work went through the backend).
  std::int64_t launches() const { return launches_; }

 private:
  /// Runs `body` for n threads (1-d grid of kEngineBlock) with the device memory open. Throws
  /// std::logic_error with the first diagnostic when the simulator reports one (a bug in the
  /// engine's kernels).
  template <class Body>
  void run(const char* kernel, std::int64_t n, Body&& body);

  GuardedSegmentBacking& memory_;
  std::int64_t launches_ = 0;
};

/// A DeviceContext of kind Cuda on a simulated device (guarded memory, SimulatedComputeBackend)
/// that owns both. Its accounting is the allocator model's, as on any device.
DevicePtr makeSimulatedCudaDevice(CachingAllocator::Options options = {});

}  // namespace matmulviz::kernels::engine
