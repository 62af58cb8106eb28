#pragma once
// The context switch under the block runner's fibers: a fiber is a stack and, while it is
// suspended, the stack pointer at which its callee-saved registers and resume address lie.
//
// swap(save, to) stores the running context in *save and resumes `to` in one step, so the code
// that suspends a thread needs no bookkeeping after it is resumed (unlike Boost.Context's
// jump_fcontext, whose transfer_t hands the previous context to the resumed side). On x86-64
// (System V) it is sixteen instructions of our own: the callee-saved registers, not the x87
// control word and MXCSR, which jump_fcontext saves and restores on every switch
// (fnstcw/fldcw/stmxcsr/ldmxcsr are microcoded and cost more than the rest of the switch).
// Nothing in a simulated launch changes the floating-point environment between switches. Other
// architectures use Boost.Context's make_fcontext / jump_fcontext underneath.

#include <cstddef>

#if defined(__x86_64__) && !defined(_WIN32) && !defined(MATMULVIZ_SIM_BOOST_SWITCH)
#define MATMULVIZ_SIM_OWN_SWITCH 1
extern "C" void matmulviz_sim_swap(void** save, void* to);  // fiber_switch.cpp
#endif

namespace matmulviz::sim::fiber {

/// What a new fiber runs: entry(arg), which must never return.
struct Start {
  void (*entry)(void* arg) = nullptr;
  void* arg = nullptr;
};

/// A suspended context for a fiber on the stack [top - size, top) that starts in
/// start.entry(start.arg) when first resumed.
void* make(char* top, std::size_t size, const Start& start);

/// Stores the running context in *save and resumes `to` (from make() or a swap's *save).
/// Returns when another swap resumes *save. `start` must be the Start that `to` was made with
/// when `to` has never run (the Boost.Context path passes it on the first switch).
#if defined(MATMULVIZ_SIM_OWN_SWITCH)
inline void swap(void** save, void* to, const Start&) {
  matmulviz_sim_swap(save, to);
}
#else
void swap(void** save, void* to, const Start& start);
#endif

}  // namespace matmulviz::sim::fiber
