#pragma once
// The 0/1 knapsack solvers of PyTorch's activation memory budget (PyTorch,
// torch/_functorch/_activation_checkpointing/knapsack.py, dp_knapsack and greedy_knapsack):
// choose which candidates to keep saved (maximising the runtime they spare) within a memory
// capacity; the rest may be recomputed.

#include <span>
#include <vector>

namespace matmulviz::partitioner {

struct KnapsackResult {
  double runtime = 0;          ///< runtime of the saved items (dp: the float32 table's optimum)
  std::vector<int> saved;      ///< item indices (dp: ascending; greedy: in walk order)
  std::vector<int> recompute;  ///< item indices (dp: descending; greedy: in walk order)
};

/// dp_knapsack. memory[i] >= 0 (normalised sizes), runtime[i] (estimated runtimes), same length;
/// capacity >= 0 in the same unit as memory. Quantises memory and capacity with S = 10000 by
/// round-half-to-even (Python's round), keeps the (n+1) x (Q+1) table in float32 (runtimes
/// converted to float32; additions and maxima in float32, so past 2^24 a runtime of 1 is
/// absorbed), an item of quantised size 0 adds its runtime to every column, an item larger than
/// Q never enters; backtracks from column Q, item n down to 1: item i-1 is saved iff row i
/// differs from row i-1 there. Throws std::invalid_argument on different lengths, a negative or
/// non-finite memory or capacity.
KnapsackResult dpKnapsack(std::span<const double> memory, std::span<const double> runtime,
                          double capacity);

/// greedy_knapsack: items in stable descending order of runtime / memory (double), each saved if
/// the running total + its memory <= capacity, else recomputed (the walk goes on). Throws
/// std::invalid_argument on different lengths and std::domain_error("float division by zero",
/// Python's ZeroDivisionError) when an item's memory is 0.
KnapsackResult greedyKnapsack(std::span<const double> memory, std::span<const double> runtime,
                              double capacity);

}  // namespace matmulviz::partitioner
