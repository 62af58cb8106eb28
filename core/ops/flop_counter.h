#pragma once
// FLOP counting as PyTorch's torch.utils.flop_counter.FlopCounterMode counts: only the ops its
// flop_registry names add FLOPs (mm, addmm, bmm, baddbmm, ...), with its formulas (mm_flop:
// [m, k] @ [k, n] = 2 * m * n * k, one multiply-add = 2 FLOPs; bmm_flop: b * 2 * m * n * k).
// Ops it does not register (dot, mv, pointwise ops, reductions) count 0. Backward formulas count
// through the mm/bmm calls they make, as in PyTorch.
//
// While a FlopCounter lives (an RAII scope, a thread-local stack: nested counters all count),
// each counted op adds (its name as PyTorch's aten op, "aten.mm", ...; FLOPs) to it. matmulviz's
// own fused op gather_bmm counts as the bmm it replaces under "matmulviz.gather_bmm" (forward)
// and "matmulviz.gather_bmm_backward" (one bmm-sized product per input that needs a gradient).

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace matmulviz {

/// FLOPs of [m, k] @ [k, n] as PyTorch's mm_flop counts them: 2 * m * n * k.
constexpr int64_t mmFlops(int64_t m, int64_t k, int64_t n) {
  return m * n * 2 * k;
}

/// FLOPs of [b, m, k] @ [b, k, n] as PyTorch's bmm_flop counts them: b * 2 * m * n * k.
constexpr int64_t bmmFlops(int64_t b, int64_t m, int64_t k, int64_t n) {
  return b * m * n * 2 * k;
}

/// Counts the FLOPs of the ops run on this thread while it lives (PyTorch's FlopCounterMode).
/// Not copyable or movable: it registers its own address on the thread's stack of counters.
class FlopCounter {
 public:
  FlopCounter();
  ~FlopCounter();
  FlopCounter(const FlopCounter&) = delete;
  FlopCounter& operator=(const FlopCounter&) = delete;

  /// The sum of all counts, in FLOPs (PyTorch's get_total_flops).
  int64_t total() const;
  /// (op name, FLOPs) per op, in the order each op was first counted.
  const std::vector<std::pair<std::string, int64_t>>& counts() const { return counts_; }
  /// The FLOPs counted for one op name ("aten.mm"), 0 when it did not run.
  int64_t count(const std::string& op) const;
  /// Forgets all counts (PyTorch clears them on entering the mode).
  void clear() { counts_.clear(); }

  /// Adds `flops` under `op` (creating the entry even for 0 FLOPs, as PyTorch does).
  void add(const std::string& op, int64_t flops);

 private:
  std::vector<std::pair<std::string, int64_t>> counts_;
};

/// Adds `flops` under `op` to every FlopCounter active on this thread, unless a
/// FlopsNotCounted scope is active. The hook each counted op calls, one line per op.
void countFlops(const char* op, int64_t flops);

/// While it lives, countFlops does nothing on this thread: for engine calls that stand in for
/// ops PyTorch's flop counter does not register (matmul's mv path runs through mm here, but
/// PyTorch runs aten.mv, which counts 0).
class FlopsNotCounted {
 public:
  FlopsNotCounted();
  ~FlopsNotCounted();
  FlopsNotCounted(const FlopsNotCounted&) = delete;
  FlopsNotCounted& operator=(const FlopsNotCounted&) = delete;
  /// True when some FlopsNotCounted scope is active on this thread.
  static bool active();
};

}  // namespace matmulviz
