#include "kernels/engine/simulated_backend.h"

#include <cstring>
#include <stdexcept>

#include "kernels/engine/engine_args.h"

namespace matmulviz::kernels::engine {

template <class Body>
void SimulatedComputeBackend::run(const char* kernel, std::int64_t n, Body&& body) {
  if (n <= 0) return;
  sim::LaunchConfig config;
  config.blockDim.x = kEngineBlock;
  config.gridDim.x = static_cast<unsigned>(sim::blocksFor(n, kEngineBlock));
  sim::LaunchOptions options;
  options.kernel = kernel;
  options.maxDiagnostics = 1;
  OpenDeviceMemory open(memory_);
  const sim::LaunchReport report = sim::launch(config, {}, options, body);
  ++launches_;
  if (!report.diagnostics.empty())
    throw std::logic_error(std::string("simulated device: kernel ") + kernel + ": " +
                           report.diagnostics.front().message);
}

void SimulatedComputeBackend::copy(const Tensor& dst, const Tensor& src) {
  if (!dst.compute() || !src.compute()) {  // a transfer: the host side is plain memory
    if (dst.dtype() != src.dtype() || !dst.isContiguous() || !src.isContiguous())
      throw std::invalid_argument(
          "copy between the host and the device: both sides must be contiguous and of one "
          "dtype");
    OpenDeviceMemory open(memory_);
    std::memcpy(dst.dataPtr(), src.dataPtr(), static_cast<std::size_t>(dst.nbytes()));
    return;
  }
  dispatchCopy(dst.dtype(), src.dtype(), [&](auto td, auto ts) {
    const auto args = binaryArgs<decltype(td), decltype(ts)>(dst, src);
    run("copy", args.n, [&](auto& ctx) { copyKernel(ctx, args); });
  });
}

void SimulatedComputeBackend::fillZero(const Tensor& t) {
  dispatchCopy(t.dtype(), t.dtype(), [&](auto td, auto) {
    using T = decltype(td);
    const auto view = storageView<T>(t, 0, "t");
    const std::int64_t offset = t.storageOffset(), n = t.numel();
    run("fill_zero", n, [&](auto& ctx) { fillZeroKernel(ctx, view, offset, n); });
  });
}

void SimulatedComputeBackend::addInPlace(const Tensor& a, const Tensor& b) {
  dispatchArithmetic(a.dtype(), "add_", [&](auto tag) {
    const auto args = binaryArgs<decltype(tag), decltype(tag)>(a, b);
    run("add", args.n, [&](auto& ctx) { addKernel(ctx, args); });
  });
}

void SimulatedComputeBackend::mulInPlace(const Tensor& a, const Tensor& b) {
  dispatchArithmetic(a.dtype(), "mul", [&](auto tag) {
    const auto args = binaryArgs<decltype(tag), decltype(tag)>(a, b);
    run("mul", args.n, [&](auto& ctx) { mulKernel(ctx, args); });
  });
}

void SimulatedComputeBackend::sumInto(const Tensor& out, const Shape& outStrides, const Tensor& t) {
  dispatchArithmetic(t.dtype(), "sum", [&](auto tag) {
    const auto args = sumArgs<decltype(tag)>(out, outStrides, t);
    run("sum", args.n, [&](auto& ctx) { sumKernel(ctx, args); });
  });
}

void SimulatedComputeBackend::gemm(const Tensor& out, const Tensor& a, const Tensor& b) {
  dispatchArithmetic(a.dtype(), "matmul", [&](auto tag) {
    const auto args = gemmArgs<decltype(tag)>(out, a, b);
    run("gemm", args.B * args.n * args.p, [&](auto& ctx) { gemmKernel(ctx, args); });
  });
}

void SimulatedComputeBackend::indexRows(const Tensor& out, const Tensor& t, const Tensor& index) {
  dispatchCopy(t.dtype(), t.dtype(), [&](auto td, auto) {
    const auto args = indexArgs<decltype(td)>(out, t, index, true);
    run("index", args.count * args.inner, [&](auto& ctx) { indexRowsKernel(ctx, args); });
  });
}

void SimulatedComputeBackend::indexAddRows(const Tensor& out, const Tensor& index,
                                           const Tensor& g) {
  dispatchArithmetic(out.dtype(), "index_put_", [&](auto tag) {
    const auto args = indexArgs<decltype(tag)>(out, g, index, false);
    run("index_put_", args.count * args.inner, [&](auto& ctx) { indexAddRowsKernel(ctx, args); });
  });
}

void SimulatedComputeBackend::gatherBmm(const Tensor& out, const Tensor& a, const Tensor& c,
                                        const Tensor& q) {
  dispatchArithmetic(a.dtype(), "gather_bmm", [&](auto tag) {
    const auto args =
        gatherBmmArgs<decltype(tag)>(out, a, c, q, a.size(0), a.size(1), a.size(2), c.size(2));
    run("gather_bmm", args.N * args.I * args.K,
        [&](auto& ctx) { gatherBmmForwardKernel(ctx, args); });
  });
}

void SimulatedComputeBackend::gatherBmmGradA(const Tensor& dA, const Tensor& dO, const Tensor& c,
                                             const Tensor& q) {
  dispatchArithmetic(dA.dtype(), "gather_bmm_backward", [&](auto tag) {
    const auto args =
        gatherBmmArgs<decltype(tag)>(dA, dO, c, q, dA.size(0), dA.size(1), dA.size(2), c.size(2));
    run("gather_bmm_grad_a", args.N * args.I * args.J,
        [&](auto& ctx) { gatherBmmGradAKernel(ctx, args); });
  });
}

void SimulatedComputeBackend::gatherBmmGradC(const Tensor& dC, const Tensor& a, const Tensor& dO,
                                             const Tensor& q) {
  dispatchArithmetic(dC.dtype(), "gather_bmm_backward", [&](auto tag) {
    const auto args =
        gatherBmmArgs<decltype(tag)>(dC, a, dO, q, a.size(0), a.size(1), a.size(2), dO.size(2));
    run("gather_bmm_grad_c", args.N * args.J * args.K,
        [&](auto& ctx) { gatherBmmGradCKernel(ctx, args); });
  });
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

}  // namespace matmulviz::kernels::engine
