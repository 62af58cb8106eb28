#pragma once
// Runs the threads of one block as fibers so that a block barrier really waits: each thread runs
// until it exits or reaches __syncthreads(); when every thread has stopped, the runner checks
// that all wait at the same barrier (else: barrier divergence), starts a new race epoch and
// resumes them. Order is deterministic: threads in linear order (x fastest).
//
// Why fibers: a barrier must suspend a thread in the middle of the kernel body and resume it
// later, with its locals intact; one OS thread per simulated thread would cost microseconds per
// switch and 1024 kernel threads per block; C++20 coroutines would make every kernel body a
// coroutine, which nvcc cannot compile as a __device__ function. The switch (fiber_switch.h)
// costs a few nanoseconds. A thread that stops hands over directly to the next thread of the
// phase (one switch per thread per barrier, not two), as a tail call, so that the resumed thread
// returns straight into its kernel; the last one hands back to the runner. While one thread
// runs, the top of the next one's stack is prefetched. Each thread has its own stack with a
// guard page below it.
//
// The common phase (every thread of the block stopped at one barrier) costs the runner nothing
// per thread: arrivals are counted and their barrier sites compared as they come. Only a phase
// where threads exited or stopped at different sites walks the threads to report divergence.

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

  /// Called from a thread's fiber when it stops at a barrier, before stopThread. Internal.
  void arriveAtBarrier(const char* file, unsigned line);

  /// Called from a thread's fiber when it stops (barrier or exit): switches to the next
  /// thread of the phase, or back to the runner. Returns when the thread is resumed. Internal.
  void stopThread(unsigned linear);

  /// The loop of the thread fiber now starting. Internal.
  [[noreturn]] void threadLoop();

 private:
  struct Impl;
  void switchTo(unsigned from, unsigned to);
  void prefetchThread(unsigned t) const;
  void finishSwitch(unsigned self);  ///< AddressSanitizer's end of a stack switch
  [[gnu::cold, gnu::noinline]] void firstSwitchTo(unsigned from, unsigned to);
  void checkBarrier(BlockState& block, const std::vector<unsigned>& waiting);

  std::unique_ptr<Impl> impl_;
  std::vector<ThreadSlot> slots_;
  std::vector<unsigned> pending_;   ///< threads to run in this phase, in order
  const unsigned* next_ = nullptr;  ///< in pending_: the next thread to run
  const unsigned* end_ = nullptr;   ///< in pending_: the end of the phase
  std::vector<unsigned> waiting_;
  std::size_t phaseWaiters_ = 0;     ///< threads of this phase that stopped at a barrier
  const char* phaseFile_ = nullptr;  ///< the barrier the first of them stopped at
  unsigned phaseLine_ = 0;
  bool phaseMixed_ = false;  ///< some stopped at another barrier (or the same, named twice)
  ThreadEntry entry_ = nullptr;
  void* body_ = nullptr;
  BlockState* block_ = nullptr;
  std::exception_ptr error_;
};

}  // namespace matmulviz::sim
