#include "core/sim/block_runner.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <utility>

#include "core/sim/fiber_switch.h"

#if defined(__SANITIZE_ADDRESS__)
#define MATMULVIZ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MATMULVIZ_ASAN 1
#endif
#endif
#if defined(MATMULVIZ_ASAN)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace matmulviz::sim {
namespace {

#if defined(MATMULVIZ_ASAN)
constexpr std::size_t kDefaultStackBytes = 512 * 1024;
#else
constexpr std::size_t kDefaultStackBytes = 64 * 1024;  // of which up to 12 KiB colouring
#endif
constexpr int kPrefetchStackLines = 6;  // 384 bytes above a suspended thread's stack pointer

/// The source file of a barrier as a person reads it: its last two path components
/// ("kernels/03_smem_tiled.h"), not the build machine's absolute path.
std::string sourceName(const char* file) {
  const std::string path(file);
  const std::size_t last = path.rfind('/');
  if (last == std::string::npos || last == 0) return path;
  const std::size_t before = path.rfind('/', last - 1);
  return before == std::string::npos ? path : path.substr(before + 1);
}

std::size_t pageSize() {
  return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

/// A block's fiber stacks: `bytes / slotBytes` slots, each a guard page and a stack.
struct StackRegion {
  void* base = nullptr;
  std::size_t bytes = 0;
  std::size_t slotBytes = 0;
};

/// Stack regions of finished launches, kept for the next ones. Mapping a block's stacks (an
/// mprotect per guard page, an munmap after) and faulting their top pages in again cost about
/// 4 ms a launch (perf: page faults in fiber::make, mprotect, munmap), far more than a small
/// launch runs: the speed ladder's simulated 1x1 product took 4 ms. A few regions are kept
/// (the app may simulate on two threads at once); each serves one BlockRunner at a time.
class StackPool {
 public:
  /// A region of at least `threads` slots of `slotBytes`: a kept one, or freshly mapped.
  /// Throws std::bad_alloc when it cannot be mapped.
  StackRegion take(std::size_t slotBytes, std::size_t threads) {
    {
      std::lock_guard lock(mutex_);
      for (auto it = kept_.begin(); it != kept_.end(); ++it) {
        if (it->slotBytes != slotBytes || it->bytes < slotBytes * threads) continue;
        const StackRegion r = *it;
        kept_.erase(it);
        return r;
      }
    }
    return map(slotBytes, threads);
  }

  void give(StackRegion r) {
#if defined(MATMULVIZ_ASAN)
    // Frames that never returned leave parts of the stacks poisoned; the next user of the
    // region (or a later mapping at the same address) must not inherit that.
    ASAN_UNPOISON_MEMORY_REGION(r.base, r.bytes);
#endif
    std::lock_guard lock(mutex_);
    if (kept_.size() < kKept) {
      kept_.push_back(r);
      return;
    }
    ::munmap(r.base, r.bytes);
  }

 private:
  static constexpr std::size_t kKept = 4;

  static StackRegion map(std::size_t slotBytes, std::size_t threads) {
    StackRegion r{nullptr, slotBytes * threads, slotBytes};
    void* base = ::mmap(nullptr, r.bytes, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) throw std::bad_alloc();
    r.base = base;
#if defined(MATMULVIZ_ASAN)
    ASAN_UNPOISON_MEMORY_REGION(base, r.bytes);
#endif
    // Guard page below each stack: an overflowing kernel faults instead of corrupting another.
    for (std::size_t t = 0; t < threads; ++t)
      ::mprotect(static_cast<char*>(base) + t * slotBytes, pageSize(), PROT_NONE);
    return r;
  }

  std::mutex mutex_;
  std::vector<StackRegion> kept_;
};

StackPool& stackPool() {
  static auto* pool = new StackPool;  // never destroyed: a runner may outlive static teardown
  return *pool;
}

}  // namespace

struct BlockRunner::Impl {
  std::size_t stackBytes = 0;  ///< usable bytes per stack, page multiple
  std::size_t slotBytes = 0;   ///< guard page + stack
  void* region = nullptr;
  std::size_t regionBytes = 0;
  unsigned runner = 0;          ///< context index of the runner: threadsPerBlock
  std::vector<void*> contexts;  ///< suspended contexts, threads then the runner; null: never ran
  unsigned current = 0;         ///< the context running now
  unsigned lastFrom = 0;        ///< the context that switched to `current` (ASan only)
  fiber::Start start;           ///< what a thread's fiber runs: threadLoop
  // AddressSanitizer bookkeeping for stack switches (sanitizer/common_interface_defs.h).
  std::vector<void*> fakeStacks;
  const void* runnerStackBottom = nullptr;
  std::size_t runnerStackSize = 0;

  char* stackBottom(unsigned t) const {
    return static_cast<char*>(region) + t * slotBytes + pageSize();
  }
};

namespace {

void threadMain(void* runner) {
  static_cast<BlockRunner*>(runner)->threadLoop();
}

}  // namespace

BlockRunner::BlockRunner(std::size_t threadsPerBlock, std::size_t stackBytes)
    : impl_(std::make_unique<Impl>()), slots_(threadsPerBlock) {
  const std::size_t page = pageSize();
  const std::size_t want = stackBytes == 0 ? kDefaultStackBytes : stackBytes;
  impl_->stackBytes = (want + page - 1) / page * page;
  impl_->slotBytes = impl_->stackBytes + page;
  const StackRegion region = stackPool().take(impl_->slotBytes, threadsPerBlock);
  impl_->region = region.base;
  impl_->regionBytes = region.bytes;
  impl_->runner = static_cast<unsigned>(threadsPerBlock);
  impl_->current = impl_->runner;
  impl_->contexts.assign(threadsPerBlock + 1, nullptr);
  impl_->start = fiber::Start{&threadMain, this};
  impl_->fakeStacks.assign(threadsPerBlock + 1, nullptr);
  for (std::size_t t = 0; t < threadsPerBlock; ++t) {
    slots_[t].linear = static_cast<unsigned>(t);
    slots_[t].runner = this;
  }
  pending_.reserve(threadsPerBlock);
  waiting_.reserve(threadsPerBlock);
}

BlockRunner::~BlockRunner() {
  // Suspended threads sit at the end of their loop (or, after an exception, at a barrier); their
  // stacks hold nothing that needs destroying beyond the kernel's own locals. The region goes
  // back to the pool for the next launch (the next runner makes fresh fibers on it).
  stackPool().give({impl_->region, impl_->regionBytes, impl_->slotBytes});
}

void ThreadSlot::waitAtBarrier(const char* file, unsigned line) {
  state = State::AtBarrier;
  barrierFile = file;
  barrierLine = line;
  runner->arriveAtBarrier(file, line);
  // The state stays AtBarrier once resumed: the runner reads it only when the phase is over,
  // by which time the thread has stopped again (AtBarrier) or exited. With nothing to do after
  // the switch, it compiles to a tail call: the resumed thread returns straight to its kernel.
  runner->stopThread(linear);
}

void BlockRunner::arriveAtBarrier(const char* file, unsigned line) {
  if (phaseWaiters_++ == 0) {
    phaseFile_ = file;
    phaseLine_ = line;
  } else if (file != phaseFile_ || line != phaseLine_) {
    phaseMixed_ = true;  // checkBarrier compares the sites (file names by value)
  }
}

void BlockRunner::switchTo(unsigned from, unsigned to) {
  Impl& m = *impl_;
  void* const target = m.contexts[to];
  if (target == nullptr) [[unlikely]] {
    firstSwitchTo(from, to);
    return;  // both ways end in a tail call: no registers to save around the switch
  }
  m.current = to;
#if defined(MATMULVIZ_ASAN)
  m.lastFrom = from;
  if (to == m.runner) {
    __sanitizer_start_switch_fiber(&m.fakeStacks[from], m.runnerStackBottom, m.runnerStackSize);
  } else {
    __sanitizer_start_switch_fiber(&m.fakeStacks[from], m.stackBottom(to), m.stackBytes);
  }
#endif
  fiber::swap(&m.contexts[from], target, m.start);
  // Resumed by another context's switchTo.
#if defined(MATMULVIZ_ASAN)
  finishSwitch(from);
#endif
}

void BlockRunner::firstSwitchTo(unsigned from, unsigned to) {
  // First run of thread `to`: a fresh context on its stack. Stagger the tops by a few cache
  // lines: stacks a power of two apart would put every thread's hot frames in the same sets.
  Impl& m = *impl_;
  const std::size_t colour = m.stackBytes >= 64 * 1024 ? (to % 64) * 192 : 0;
  m.contexts[to] =
      fiber::make(m.stackBottom(to) + m.stackBytes - colour, m.stackBytes - colour, m.start);
  switchTo(from, to);
}

void BlockRunner::finishSwitch([[maybe_unused]] unsigned self) {
#if defined(MATMULVIZ_ASAN)
  Impl& m = *impl_;
  const void* bottom = nullptr;
  std::size_t size = 0;
  __sanitizer_finish_switch_fiber(m.fakeStacks[self], &bottom, &size);
  if (m.lastFrom == m.runner) {
    m.runnerStackBottom = bottom;
    m.runnerStackSize = size;
  }
#endif
}

void BlockRunner::threadLoop() {
  Impl& m = *impl_;
  const unsigned t = m.current;
  finishSwitch(t);  // fakeStacks[t] is null: nothing to restore on a new fiber
  for (;;) {
    slots_[t].state = ThreadSlot::State::Running;
    try {
      entry_(body_, slots_[t], *block_);
    } catch (...) {
      if (!error_) error_ = std::current_exception();
      end_ = next_;  // the phase stops here: back to the runner, which rethrows
    }
    slots_[t].state = ThreadSlot::State::Exited;
    stopThread(t);
  }
}

void BlockRunner::stopThread(unsigned t) {
  unsigned next = impl_->runner;
  if (next_ != end_) {
    next = *next_++;
    if (next_ != end_) prefetchThread(*next_);  // the one after `next`
  }
  switchTo(t, next);
}

void BlockRunner::prefetchThread(unsigned t) const {
  // A block's suspended stacks do not fit in L1: fetch the hot top of the stack of the thread
  // after the next one (its saved registers and the kernel's frame above them) while the next
  // one runs.
  const char* sp = static_cast<const char*>(impl_->contexts[t]);
  if (sp != nullptr) {
    for (int line = 0; line < kPrefetchStackLines; ++line) __builtin_prefetch(sp + 64 * line, 1);
  }
}

void BlockRunner::runBlock(BlockState& block, ThreadEntry entry, void* body) {
  entry_ = entry;
  body_ = body;
  block_ = &block;
  const Dim3 bd = block.config.blockDim;
  const unsigned n = static_cast<unsigned>(slots_.size());
  pending_.clear();
  for (unsigned t = 0; t < n; ++t) {
    ThreadSlot& s = slots_[t];
    s.threadIdx = Dim3{t % bd.x, (t / bd.x) % bd.y, t / (bd.x * bd.y)};
    s.state = ThreadSlot::State::Ready;
    pending_.push_back(t);
  }
  while (!pending_.empty()) {
    next_ = pending_.data() + 1;
    end_ = pending_.data() + pending_.size();
    phaseWaiters_ = 0;
    phaseMixed_ = false;
    switchTo(impl_->runner, pending_[0]);  // the threads of the phase run one after another
    if (error_) {
      // Threads stopped at a barrier stay suspended; the runner is not reusable afterwards.
      std::rethrow_exception(std::exchange(error_, nullptr));
    }
    if (phaseWaiters_ == 0) break;
    block.counters.barrierWaits += phaseWaiters_;
    ++block.epoch;  // a new race epoch: accesses before the barrier never race with those after
    // The common case: every thread of the block waits at one barrier; the next phase runs
    // them all again, in the same order.
    if (phaseWaiters_ == n && !phaseMixed_) continue;
    waiting_.clear();
    for (unsigned t : pending_) {
      if (slots_[t].state == ThreadSlot::State::AtBarrier) waiting_.push_back(t);
    }
    checkBarrier(block, waiting_);
    std::swap(pending_, waiting_);
  }
}

void BlockRunner::checkBarrier(BlockState& block, const std::vector<unsigned>& waiting) {
  const unsigned n = static_cast<unsigned>(slots_.size());
  const ThreadSlot& first = slots_[waiting.front()];
  if (waiting.size() < n) {
    unsigned exited = 0;
    while (slots_[exited].state != ThreadSlot::State::Exited) ++exited;
    const std::string msg =
        "thread " + toString(first.threadIdx) + " waits at the barrier at " +
        sourceName(first.barrierFile) + ":" + std::to_string(first.barrierLine) + " but thread " +
        toString(slots_[exited].threadIdx) + " has exited without reaching it (" +
        std::to_string(n - waiting.size()) + " of " + std::to_string(n) +
        " threads exited); on a GPU this hangs or corrupts the block. Every thread of a block "
        "must reach every __syncthreads(): no barrier inside a branch that only some threads "
        "take, and no return before a barrier";
    block.diagnostics->divergence(block.blockIdx, first.threadIdx, msg);
    return;
  }
  for (unsigned t : waiting) {
    const ThreadSlot& s = slots_[t];
    const bool sameSite =
        s.barrierLine == first.barrierLine &&
        (s.barrierFile == first.barrierFile || std::strcmp(s.barrierFile, first.barrierFile) == 0);
    if (!sameSite) {
      const std::string msg =
          "thread " + toString(first.threadIdx) + " waits at the barrier at " +
          sourceName(first.barrierFile) + ":" + std::to_string(first.barrierLine) +
          " while thread " + toString(s.threadIdx) + " waits at the one at " +
          sourceName(s.barrierFile) + ":" + std::to_string(s.barrierLine) +
          "; threads of a block must reach the same __syncthreads() (no barrier in divergent "
          "branches)";
      block.diagnostics->divergence(block.blockIdx, s.threadIdx, msg);
      return;
    }
  }
}

}  // namespace matmulviz::sim
