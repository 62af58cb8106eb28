// strategy2 (the forum post): per-row matmul with c[q[i]], then cat.
//   out2 = strategy2(a, c, q)
//   def strategy2(a, c, index):
//       return torch.cat([torch.matmul(a[i:i + 1, :, :], c[index[i], :, :]) for i in
//       range(a.shape[0])], dim=0)
// index[i] is a 0-dim integer tensor: indexing with it is a view (select), so c is never copied.
#include "core/ops/ops.h"
#include "core/strategies/strategy.h"

namespace matmulviz {

Tensor runStrategy2(const Tensor& a, const Tensor& c, const Tensor& q, int64_t /*batch*/) {
  std::vector<Tensor> parts;
  parts.reserve(static_cast<size_t>(a.size(0)));
  for (int64_t i = 0; i < a.size(0); ++i) {
    parts.push_back(matmul(slice(a, 0, i, i + 1), index(c, select(q, 0, i))));
    parts.back().setLabel("matmul(a[i:i+1], c[q[i]]) results").setCategory(MemoryCategory::Outputs);
  }
  return cat(parts, 0);
}

}  // namespace matmulviz
