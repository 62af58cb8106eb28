#pragma once
// Runs the threads of one block as fibers (Boost.Context) so that a block barrier really waits:
// each thread runs until it exits or reaches __syncthreads(); when every thread has stopped, the
// runner checks that all wait at the same barrier (else: barrier divergence), starts a new race
// epoch and resumes them. Order is deterministic: threads in linear order (x fastest).
//
// Why fibers: a barrier must suspend a thread in the middle of the kernel body and resume it
// later, with its locals intact; one OS thread per simulated thread would cost microseconds per
// switch and 1024 kernel threads per block; C++20 coroutines would make every kernel body a
// coroutine, which nvcc cannot compile as a __device__ function. Boost.Context's fcontext
// switches in a few nanoseconds. A thread that stops hands over directly to the next thread of
// the phase (one switch per thread per barrier, not two); the last one hands back to the runner.
// Each thread has its own stack with a guard page below it.

#include <cstddef>
#include <exception>
#include <memory>
#include <vector>

#include "core/sim/block_state.h"

namespace matmulviz::sim {

class BlockRunner {
 public:
  /// Runs the body of one thread: builds its context on the fiber's stack and calls the kernel.
  using ThreadEntry = void (*)(void* body, ThreadSlot& slot, BlockState& block);

  /// Prepares `threadsPerBlock` fibers with `stackBytes` of stack each (0: the default, 64 KiB,
  /// larger under AddressSanitizer). Throws std::bad_alloc when the stacks cannot be mapped.
  BlockRunner(std::size_t threadsPerBlock, std::size_t stackBytes);
  ~BlockRunner();
  BlockRunner(const BlockRunner&) = delete;
  BlockRunner& operator=(const BlockRunner&) = delete;

  /// Runs every thread of `block` to completion. Rethrows the first exception a thread raised
  /// (for example std::bad_alloc while tracing) after the block has stopped.
  void runBlock(BlockState& block, ThreadEntry entry, void* body);

  /// Called from a thread's fiber when it stops (barrier or exit): switches to the next
  /// thread of the phase, or back to the runner. Returns when the thread is resumed. Internal.
  void stopThread(unsigned linear);

  /// The loop of the thread fiber now starting; `from` is where its starter stopped. Internal.
  [[noreturn]] void threadLoop(void* from);

 private:
  struct Impl;
  void switchTo(unsigned from, unsigned to);
  void checkBarrier(BlockState& block, const std::vector<unsigned>& waiting);

  std::unique_ptr<Impl> impl_;
  std::vector<ThreadSlot> slots_;
  std::vector<unsigned> pending_;  ///< threads to run in this phase, in order
  std::size_t pendingNext_ = 0;    ///< index in pending_ of the next thread to run
  std::vector<unsigned> waiting_;
  ThreadEntry entry_ = nullptr;
  void* body_ = nullptr;
  BlockState* block_ = nullptr;
  std::exception_ptr error_;
};

}  // namespace matmulviz::sim
