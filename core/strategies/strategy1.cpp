// strategy1 (the forum post): per-row matmul over a precomputed c[q], then cat.
//   out1 = strategy1(a, c[q])
//   def strategy1(a, c):
//       return torch.cat([torch.matmul(a[i:i + 1, :, :], c[i, :, :]) for i in range(a.shape[0])],
//       dim=0)
// c[q] is advanced indexing: a copy of N x J x K elements that lives for the whole statement,
// and stays alive after it when a requires grad (each mm saves its c[i] view as mat2, and a
// view keeps its whole storage).
#include "core/ops/ops.h"
#include "core/strategies/strategy.h"

namespace matmulviz {

namespace {
Tensor strategy1(const Tensor& a, const Tensor& c) {
  std::vector<Tensor> parts;  // the list comprehension
  parts.reserve(static_cast<size_t>(a.size(0)));
  for (int64_t i = 0; i < a.size(0); ++i) {
    parts.push_back(matmul(slice(a, 0, i, i + 1), select(c, 0, i)));
    parts.back().setLabel("matmul(a[i:i+1], c[i]) results").setCategory(MemoryCategory::Outputs);
  }
  return cat(parts, 0);
}
}  // namespace

Tensor runStrategy1(const Tensor& a, const Tensor& c, const Tensor& q, int64_t /*batch*/) {
  return strategy1(a, index(c, q).setLabel("c[q]").setCategory(MemoryCategory::GatheredCopy));
}

}  // namespace matmulviz
