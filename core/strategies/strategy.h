#pragma once
// The strategies of the PyTorch forum post and our fused one. Each is the seed's Python statement
// `out = strategyX(...)` written against the engine in the seed's statement order, so tensor
// lifetimes (and so curMem/maxMem) follow from the engine's rules, not from per-strategy math.

#include "core/tensor/tensor.h"

#include <functional>
#include <string>
#include <vector>

namespace matmulviz {

/// Runs the whole statement `out = ...` for a [N, I, J], c [M, J, K] (device tensors) and the
/// host index q [N]; returns out [N, I, K].
using StrategyFn =
    std::function<Tensor(const Tensor& a, const Tensor& c, const Tensor& q, int64_t batch)>;

struct StrategyInfo {
  std::string name;       ///< CLI name: strategy1, strategy2, strategy3, direct, fused
  std::string statement;  ///< the Python it mirrors
  std::string summary;    ///< one line for people
  StrategyFn run;
};

/// strategy1, strategy2, strategy3, direct, fused, in that order.
const std::vector<StrategyInfo>& strategyRegistry();
/// Throws std::invalid_argument listing the known names.
const StrategyInfo& findStrategy(const std::string& name);

Tensor runStrategy1(const Tensor& a, const Tensor& c, const Tensor& q, int64_t batch);
Tensor runStrategy2(const Tensor& a, const Tensor& c, const Tensor& q, int64_t batch);
Tensor runStrategy3(const Tensor& a, const Tensor& c, const Tensor& q, int64_t batch);
Tensor runDirect(const Tensor& a, const Tensor& c, const Tensor& q, int64_t batch);
Tensor runFused(const Tensor& a, const Tensor& c, const Tensor& q, int64_t batch);

}  // namespace matmulviz
