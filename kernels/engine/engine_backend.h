#pragma once
// One body per engine primitive for every device with its own memory: EngineBackend<Device>
// implements the ComputeBackend primitives once (argument checks, dtype dispatch, the kernels'
// arguments, thread counts and grid geometry) and leaves to Device only how a kernel is
// launched and the few things a device does natively:
//
//   template <class Op, class Args> void launch(unsigned blocks, const Args& args);
//       runs Op::run on blocks x kEngineBlock threads (kernels/engine/engine_ops.h);
//   template <class Op, class Args> void launchShaped(const sim::LaunchConfig&, const Args&);
//       runs Op::run on the config's grid, blocks and dynamic shared memory (kernel 08);
//   void transfer(const Tensor& dst, const Tensor& src, std::int64_t bytes, bool toDevice);
//       a contiguous same-dtype copy between host memory and the device;
//   void zeroBytes(const Tensor& t);   t contiguous, on the device, at least one byte;
//   bool gemmNative(const Tensor& out, const Tensor& a, const Tensor& b);
//       a library gemm (cuBLAS) when it takes these operands; false runs the engine's kernel.
//
// The simulated device (simulated_backend.h) and the CUDA backend (kernels/cuda/
// cuda_compute_backend.h) both derive from it, so the checks CI runs on the simulated device are
// the ones a GPU run makes. Definitions live in engine_backend_impl.h, which only the file that
// explicitly instantiates EngineBackend<Device> includes.
//
// Errors: std::invalid_argument naming the op and the operand (a tensor on another device, a
// dtype the kernels lack, mismatched element counts, more than kMaxDims dims, a grid larger than
// a 1-d CUDA grid); the device's own error type when a launch fails.

#include <cstdint>

#include "core/tensor/compute_backend.h"

namespace matmulviz::kernels::engine {

template <class Device>
class EngineBackend : public ComputeBackend {
 public:
  /// Device to device: the strided copy kernel (float32 <-> float64 converted, same-dtype copies
  /// of any width). Between host memory (compute() null) and the device: Device::transfer, for
  /// contiguous tensors of one dtype only.
  void copy(const Tensor& dst, const Tensor& src) final;
  void fillZero(const Tensor& t) final;
  void addInPlace(const Tensor& a, const Tensor& b) final;
  void mulInPlace(const Tensor& a, const Tensor& b) final;
  void sumInto(const Tensor& out, const Shape& outStrides, const Tensor& t) final;
  /// Device::gemmNative, else the engine's strided gemm kernel. Empty products return at once;
  /// K = 0 zero-fills out.
  void gemm(const Tensor& out, const Tensor& a, const Tensor& b) final;
  void indexRows(const Tensor& out, const Tensor& t, const Tensor& index) final;
  void indexAddRows(const Tensor& out, const Tensor& index, const Tensor& g) final;
  void gatherBmm(const Tensor& out, const Tensor& a, const Tensor& c, const Tensor& q) final;
  /// Kernel 08's four launches (histogram, prefix sum, scatter, product), TPB 16, after the
  /// workspace is zeroed.
  void gatherBmmGrouped(const Tensor& out, const Tensor& a, const Tensor& c, const Tensor& q,
                        const Tensor& buckets) final;
  void gatherBmmGradA(const Tensor& dA, const Tensor& dO, const Tensor& c, const Tensor& q) final;
  void gatherBmmGradC(const Tensor& dC, const Tensor& a, const Tensor& dO, const Tensor& q) final;

 protected:
  /// Throws std::invalid_argument unless t's memory is this backend's.
  void requireOnDevice(const Tensor& t, const char* op, const char* what) const;
  /// t's elements set to zero by the engine's fill kernel (for a Device with no memset).
  void zeroByKernel(const Tensor& t);

 private:
  /// Op on n threads, one per element: ceil(n / kEngineBlock) blocks of kEngineBlock; nothing
  /// for n <= 0; std::invalid_argument when a 1-d grid cannot hold that many blocks.
  template <class Op, class Args>
  void launchOp(std::int64_t n, const Args& args);
  Device& device() { return static_cast<Device&>(*this); }
};

}  // namespace matmulviz::kernels::engine
