#include "core/sim/block_runner.h"

#include <sys/mman.h>
#include <unistd.h>

// Boost.Context's fcontext layer: make_fcontext / jump_fcontext, the assembly switch that
// boost::context::fiber is built on, exported by libboost_context. Used directly so that a
// thread can hand over to the next thread without a round trip through the runner.
#include <boost/context/detail/fcontext.hpp>
#include <cstring>
#include <new>
#include <string>
#include <utility>

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

namespace bcd = boost::context::detail;

#if defined(__x86_64__) && !defined(_WIN32)
// On x86-64 (System V) the switch is these dozen instructions instead of jump_fcontext: the
// same callee-saved registers, but not the x87 control word and MXCSR, which jump_fcontext
// saves and restores on every switch (fnstcw/fldcw/stmxcsr/ldmxcsr are microcoded and cost
// more than the rest of the switch together; measured with bench_simulator's smem_tiled case).
// Nothing in a simulated launch changes the floating-point environment between switches.
// Other architectures use Boost.Context's jump_fcontext.
#define MATMULVIZ_SIM_OWN_SWITCH 1
extern "C" bcd::transfer_t matmulviz_sim_switch(bcd::fcontext_t to, void* data);
extern "C" void matmulviz_sim_trampoline();
asm(R"(
    .text
    .p2align 4
    .globl matmulviz_sim_switch
    .hidden matmulviz_sim_switch
    .type matmulviz_sim_switch,@function
matmulviz_sim_switch:
    pushq %rbp
    pushq %rbx
    pushq %r15
    pushq %r14
    pushq %r13
    pushq %r12
    movq %rsp, %rax
    movq %rdi, %rsp
    popq %r12
    popq %r13
    popq %r14
    popq %r15
    popq %rbx
    popq %rbp
    movq %rsi, %rdx
    movq %rax, %rdi
    ret
    .size matmulviz_sim_switch,.-matmulviz_sim_switch

    .p2align 4
    .globl matmulviz_sim_trampoline
    .hidden matmulviz_sim_trampoline
    .type matmulviz_sim_trampoline,@function
matmulviz_sim_trampoline:
    movq %rdx, %rsi
    movq %r12, %r8
    call *%r8
    ud2
    .size matmulviz_sim_trampoline,.-matmulviz_sim_trampoline
)");
#endif

namespace matmulviz::sim {
namespace {

#if defined(MATMULVIZ_ASAN)
constexpr std::size_t kDefaultStackBytes = 512 * 1024;
#else
constexpr std::size_t kDefaultStackBytes = 64 * 1024;  // of which up to 12 KiB colouring
#endif

std::size_t pageSize() {
  return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

}  // namespace

struct BlockRunner::Impl {
  std::size_t stackBytes = 0;  ///< usable bytes per stack, page multiple
  std::size_t slotBytes = 0;   ///< guard page + stack
  void* region = nullptr;
  std::size_t regionBytes = 0;
  unsigned runner = 0;                    ///< context index of the runner: threadsPerBlock
  std::vector<bcd::fcontext_t> contexts;  ///< suspended contexts, threads then the runner
  unsigned current = 0;                   ///< the context running now
  unsigned lastFrom = 0;                  ///< the context that switched to `current`
  // AddressSanitizer bookkeeping for stack switches (sanitizer/common_interface_defs.h).
  std::vector<void*> fakeStacks;
  const void* runnerStackBottom = nullptr;
  std::size_t runnerStackSize = 0;

  char* stackBottom(unsigned t) const {
    return static_cast<char*>(region) + t * slotBytes + pageSize();
  }
};

namespace {

void threadMain(bcd::transfer_t from) {
  static_cast<BlockRunner*>(from.data)->threadLoop(from.fctx);
}

#if defined(MATMULVIZ_SIM_OWN_SWITCH)
/// The first switch to a new context "returns" into the trampoline, which calls threadMain with
/// the switch's transfer_t {fctx in rdi, data in rsi (moved from rdx)}.
void threadStart(bcd::fcontext_t from, void* data) {
  threadMain(bcd::transfer_t{from, data});
}

bcd::fcontext_t makeContext(char* top, std::size_t) {
  auto* sp = reinterpret_cast<std::uintptr_t*>(reinterpret_cast<std::uintptr_t>(top) &
                                               ~std::uintptr_t{15});
  sp -= 2;  // after `ret` into the trampoline rsp is 16-byte aligned, as a call expects
  *--sp = reinterpret_cast<std::uintptr_t>(&matmulviz_sim_trampoline);
  *--sp = 0;                                               // rbp
  *--sp = 0;                                               // rbx
  *--sp = 0;                                               // r15
  *--sp = 0;                                               // r14
  *--sp = 0;                                               // r13
  *--sp = reinterpret_cast<std::uintptr_t>(&threadStart);  // r12: what the trampoline calls
  return sp;
}

bcd::transfer_t jump(bcd::fcontext_t to, void* data) {
  return matmulviz_sim_switch(to, data);
}
#else
bcd::fcontext_t makeContext(char* top, std::size_t size) {
  return bcd::make_fcontext(top, size, &threadMain);
}

bcd::transfer_t jump(bcd::fcontext_t to, void* data) {
  return bcd::jump_fcontext(to, data);
}
#endif

}  // namespace

BlockRunner::BlockRunner(std::size_t threadsPerBlock, std::size_t stackBytes)
    : impl_(std::make_unique<Impl>()), slots_(threadsPerBlock) {
  const std::size_t page = pageSize();
  const std::size_t want = stackBytes == 0 ? kDefaultStackBytes : stackBytes;
  impl_->stackBytes = (want + page - 1) / page * page;
  impl_->slotBytes = impl_->stackBytes + page;
  impl_->regionBytes = impl_->slotBytes * threadsPerBlock;
  void* region = ::mmap(nullptr, impl_->regionBytes, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (region == MAP_FAILED) throw std::bad_alloc();
  impl_->region = region;
#if defined(MATMULVIZ_ASAN)
  ASAN_UNPOISON_MEMORY_REGION(region, impl_->regionBytes);
#endif
  for (std::size_t t = 0; t < threadsPerBlock; ++t) {
    // Guard page below each stack: an overflowing kernel faults instead of corrupting another.
    ::mprotect(static_cast<char*>(region) + t * impl_->slotBytes, page, PROT_NONE);
  }
  impl_->runner = static_cast<unsigned>(threadsPerBlock);
  impl_->current = impl_->runner;
  impl_->contexts.assign(threadsPerBlock + 1, nullptr);
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
  // stacks hold nothing that needs destroying beyond the kernel's own locals.
#if defined(MATMULVIZ_ASAN)
  // Their frames never returned, so AddressSanitizer still marks parts of the stacks as poisoned;
  // a later mapping at the same address must not inherit that.
  ASAN_UNPOISON_MEMORY_REGION(impl_->region, impl_->regionBytes);
#endif
  ::munmap(impl_->region, impl_->regionBytes);
}

void ThreadSlot::waitAtBarrier(const char* file, unsigned line) {
  state = State::AtBarrier;
  barrierFile = file;
  barrierLine = line;
  runner->stopThread(linear);
  state = State::Running;
}

void BlockRunner::switchTo(unsigned from, unsigned to) {
  Impl& m = *impl_;
  if (m.contexts[to] == nullptr) {
    // First run of this thread: a fresh context on its stack. Stagger the tops by a few cache
    // lines: stacks a power of two apart would put every thread's hot frames in the same sets.
    const std::size_t colour = (to % 64) * 192;
    m.contexts[to] = makeContext(m.stackBottom(to) + m.stackBytes - colour, m.stackBytes - colour);
  }
  m.lastFrom = from;
  m.current = to;
#if defined(MATMULVIZ_ASAN)
  if (to == m.runner) {
    __sanitizer_start_switch_fiber(&m.fakeStacks[from], m.runnerStackBottom, m.runnerStackSize);
  } else {
    __sanitizer_start_switch_fiber(&m.fakeStacks[from], m.stackBottom(to), m.stackBytes);
  }
#endif
  const bcd::transfer_t back = jump(std::exchange(m.contexts[to], nullptr), this);
  // Resumed: `back.fctx` is where the context that switched to us stopped.
#if defined(MATMULVIZ_ASAN)
  const void* bottom = nullptr;
  std::size_t size = 0;
  __sanitizer_finish_switch_fiber(m.fakeStacks[from], &bottom, &size);
  if (m.lastFrom == m.runner) {
    m.runnerStackBottom = bottom;
    m.runnerStackSize = size;
  }
#endif
  m.contexts[m.lastFrom] = back.fctx;
}

void BlockRunner::threadLoop(void* from) {
  Impl& m = *impl_;
  const unsigned t = m.current;
  m.contexts[m.lastFrom] = from;  // later resumes record this in switchTo
#if defined(MATMULVIZ_ASAN)
  {
    const void* bottom = nullptr;
    std::size_t size = 0;
    __sanitizer_finish_switch_fiber(nullptr, &bottom, &size);
    if (m.lastFrom == m.runner) {
      m.runnerStackBottom = bottom;
      m.runnerStackSize = size;
    }
  }
#endif
  for (;;) {
    slots_[t].state = ThreadSlot::State::Running;
    try {
      entry_(body_, slots_[t], *block_);
    } catch (...) {
      if (!error_) error_ = std::current_exception();
    }
    slots_[t].state = ThreadSlot::State::Exited;
    stopThread(t);
  }
}

void BlockRunner::stopThread(unsigned t) {
  unsigned next = impl_->runner;
  if (!error_ && pendingNext_ < pending_.size()) next = pending_[pendingNext_++];
  switchTo(t, next);
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
    pendingNext_ = 1;
    switchTo(impl_->runner, pending_[0]);  // the threads of the phase run one after another
    if (error_) {
      // Threads stopped at a barrier stay suspended; the runner is not reusable afterwards.
      std::rethrow_exception(std::exchange(error_, nullptr));
    }
    waiting_.clear();
    for (unsigned t : pending_) {
      if (slots_[t].state == ThreadSlot::State::AtBarrier) waiting_.push_back(t);
    }
    if (waiting_.empty()) break;
    checkBarrier(block, waiting_);
    ++block.epoch;  // a new race epoch: accesses before the barrier never race with those after
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
        "thread " + toString(first.threadIdx) + " waits at the barrier at " + first.barrierFile +
        ":" + std::to_string(first.barrierLine) + " but thread " +
        toString(slots_[exited].threadIdx) + " has exited without reaching it (" +
        std::to_string(n - waiting.size()) + " of " + std::to_string(n) +
        " threads exited); on a GPU this hangs or corrupts the block. Every thread of a block "
        "must reach every __syncthreads(): move the exit after the barrier";
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
          "thread " + toString(first.threadIdx) + " waits at the barrier at " + first.barrierFile +
          ":" + std::to_string(first.barrierLine) + " while thread " + toString(s.threadIdx) +
          " waits at the one at " + s.barrierFile + ":" + std::to_string(s.barrierLine) +
          "; threads of a block must reach the same __syncthreads() (no barrier in divergent "
          "branches)";
      block.diagnostics->divergence(block.blockIdx, s.threadIdx, msg);
      return;
    }
  }
}

}  // namespace matmulviz::sim
