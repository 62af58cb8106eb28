#pragma once
// A CUDA device without a GPU: the engine's kernel bodies run in the simulator (every thread,
// every access bounds-checked) on guarded memory the host cannot read outside a launch or a
// transfer. The primitives, their checks and their launch geometry are EngineBackend's, the
// same as the CUDA backend's; this class only says how a kernel runs here.

#include <cstdint>
#include <memory>
#include <string>

#include "core/sim/launch_config.h"
#include "core/sim/launcher.h"
#include "core/tensor/device.h"
#include "kernels/engine/device_memory_guard.h"
#include "kernels/engine/engine_args.h"
#include "kernels/engine/engine_backend.h"

namespace matmulviz::kernels::engine {

class SimulatedComputeBackend final : public EngineBackend<SimulatedComputeBackend> {
 public:
  explicit SimulatedComputeBackend(GuardedSegmentBacking& memory) : memory_(memory) {}
  std::string name() const override { return "simulated cuda"; }
  void synchronize() override {}

  /// Kernel launches so far (tests check that work went through the backend).
  std::int64_t launches() const { return launches_; }

  // EngineBackend's launch hooks.
  /// Runs Op::run on blocks x kEngineBlock simulated threads with the device memory open.
  /// Throws std::logic_error with the first diagnostic when the simulator reports one (a bug in
  /// the engine's kernels).
  template <class Op, class Args>
  void launch(unsigned blocks, const Args& args) {
    sim::LaunchConfig config;
    config.blockDim.x = kEngineBlock;
    config.gridDim.x = blocks;
    launchShaped<Op>(config, args);
  }
  /// Runs Op::run on `config` (its grid, blocks and dynamic shared memory), as launch does.
  template <class Op, class Args>
  void launchShaped(const sim::LaunchConfig& config, const Args& args) {
    sim::LaunchOptions options;
    options.kernel = Op::name;
    options.maxDiagnostics = 1;
    // One host thread: the simulator's atomicAddAt is a load and a store (strided.h), atomic
    // only while blocks run one after another, and its sums then add in one fixed order; kernel
    // 08's scatter hands out places in that order too.
    options.threads = 1;
    OpenDeviceMemory open(memory_);
    const sim::LaunchReport report =
        sim::launch(config, {}, options, [&](auto& ctx) { Op::run(ctx, args); });
    ++launches_;
    if (!report.diagnostics.empty())
      throw std::logic_error(std::string("simulated device: kernel ") + Op::name + ": " +
                             report.diagnostics.front().message);
  }
  /// memcpy with the device memory open.
  void transfer(const Tensor& dst, const Tensor& src, std::int64_t bytes, bool toDevice);
  void zeroBytes(const Tensor& t) { zeroByKernel(t); }
  /// The simulated device has no gemm library: always the engine's kernel.
  bool gemmNative(const Tensor&, const Tensor&, const Tensor&) { return false; }

 private:
  GuardedSegmentBacking& memory_;
  std::int64_t launches_ = 0;
};

extern template class EngineBackend<SimulatedComputeBackend>;

DevicePtr makeSimulatedCudaDevice(CachingAllocator::Options options = {});

}  // namespace matmulviz::kernels::engine
