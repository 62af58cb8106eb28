#include "core/strategies/strategy.h"

#include <stdexcept>

namespace matmulviz {

const std::vector<StrategyInfo>& strategyRegistry() {
  static const std::vector<StrategyInfo> registry = {
      {"strategy1", "out = strategy1(a, c[q])  # per-row matmul over c[q], then cat",
       "copies c[q] once, then one tiny matmul per row", runStrategy1},
      {"strategy2", "out = strategy2(a, c, q)  # per-row matmul with c[q[i]] (a view), then cat",
       "no copy of c: c[q[i]] is a view; one tiny matmul per row", runStrategy2},
      {"strategy3", "out = strategy3(a, c, q, batch)  # per-batch matmul with c[q[batch]]",
       "copies batch x J x K of c per step; one bmm per batch", runStrategy3},
      {"direct", "out = torch.matmul(a, c[q])", "copies all of c[q], then one bmm", runDirect},
      {"fused", "out = gather_bmm(a, c, q)  # ours",
       "no copy of c[q]: rows grouped by q, one GEMM per distinct index", runFused},
  };
  return registry;
}

const StrategyInfo& findStrategy(const std::string& name) {
  for (const auto& s : strategyRegistry())
    if (s.name == name) return s;
  std::string known;
  for (const auto& s : strategyRegistry()) known += (known.empty() ? "" : ", ") + s.name;
  throw std::invalid_argument("unknown strategy '" + name + "' (allowed: " + known + ")");
}

}  // namespace matmulviz
