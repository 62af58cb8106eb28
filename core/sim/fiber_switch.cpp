#include "core/sim/fiber_switch.h"

#include <cstdint>

#if defined(MATMULVIZ_SIM_OWN_SWITCH)
// matmulviz_sim_swap(save = rdi, to = rsi): push the callee-saved registers, store rsp in *save,
// load `to` into rsp, pop the registers saved there and jump to the resumed context's return
// address. A new context "returns" into the trampoline, which calls r12(r13): make() puts entry
// and arg there.
//
// Why pop + jmp rather than ret: the CPU predicts a ret from its return stack buffer, which holds
// the call site of the thread that is suspending. The resumed thread was suspended somewhere
// else whenever a kernel has two barriers: in smem_tiled, threads stopping at the first barrier
// resume threads that stopped at the second, so every ret was mispredicted (about 30% of that
// kernel's simulated time). An indirect jmp is predicted from the branch history instead, which
// tells the two sites apart. The return stack is left one entry out of step per switch; only the
// thread's eventual return from its kernel pays for that, once.
extern "C" void matmulviz_sim_trampoline();
asm(R"(
    .text
    .p2align 4
    .globl matmulviz_sim_swap
    .hidden matmulviz_sim_swap
    .type matmulviz_sim_swap,@function
matmulviz_sim_swap:
    pushq %rbp
    pushq %rbx
    pushq %r15
    pushq %r14
    pushq %r13
    pushq %r12
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r12
    popq %r13
    popq %r14
    popq %r15
    popq %rbx
    popq %rbp
    popq %rcx
    jmpq *%rcx
    .size matmulviz_sim_swap,.-matmulviz_sim_swap

    .p2align 4
    .globl matmulviz_sim_trampoline
    .hidden matmulviz_sim_trampoline
    .type matmulviz_sim_trampoline,@function
matmulviz_sim_trampoline:
    movq %r13, %rdi
    call *%r12
    ud2
    .size matmulviz_sim_trampoline,.-matmulviz_sim_trampoline
)");

namespace matmulviz::sim::fiber {

void* make(char* top, std::size_t, const Start& start) {
  auto* sp = reinterpret_cast<std::uintptr_t*>(reinterpret_cast<std::uintptr_t>(top) &
                                               ~std::uintptr_t{15});
  sp -= 2;  // after `ret` into the trampoline rsp is 16-byte aligned, as a call expects
  *--sp = reinterpret_cast<std::uintptr_t>(&matmulviz_sim_trampoline);
  *--sp = 0;                                              // rbp
  *--sp = 0;                                              // rbx
  *--sp = 0;                                              // r15
  *--sp = 0;                                              // r14
  *--sp = reinterpret_cast<std::uintptr_t>(start.arg);    // r13: the entry's argument
  *--sp = reinterpret_cast<std::uintptr_t>(start.entry);  // r12: what the trampoline calls
  return sp;
}

}  // namespace matmulviz::sim::fiber

#else
// Boost.Context's fcontext layer (exported by libboost_context): jump_fcontext hands the
// resumed side the context it came from, which stores it where the swapper asked.
#include <boost/context/detail/fcontext.hpp>

namespace bcd = boost::context::detail;

namespace matmulviz::sim::fiber {
namespace {

/// Passed on every jump: where the jumper's context goes, and what a new fiber runs.
struct Hop {
  void** save;
  Start start;
};

void fiberMain(bcd::transfer_t from) {
  const Hop* hop = static_cast<const Hop*>(from.data);
  *hop->save = from.fctx;
  const Start start = hop->start;
  start.entry(start.arg);
}

}  // namespace

void* make(char* top, std::size_t size, const Start&) {
  return bcd::make_fcontext(top, size, &fiberMain);
}

void swap(void** save, void* to, const Start& start) {
  Hop hop{save, start};
  const bcd::transfer_t back = bcd::jump_fcontext(to, &hop);
  *static_cast<const Hop*>(back.data)->save = back.fctx;
}

}  // namespace matmulviz::sim::fiber
#endif
