// strategy3 (the forum post): per-batch matmul with c[q[batch]], then cat.
//   out3 = strategy3(a, c, q, 256)
//   def strategy3(a, c, index, batch=256):
//       return torch.cat([torch.matmul(a[i * batch:i * batch + batch, :, :],
//                                      c[index[i * batch:i * batch + batch], :, :])
//                         for i in range(a.shape[0] // batch)], dim=0)
// index[i*b:i*b+b] is a 1-dim tensor: c[...] copies batch x J x K elements per step. The copy
// dies with the step unless a requires grad (bmm saves it as mat2).
// Unlike the seed, which drops the last N % batch rows, we run ceil(N / batch) steps so the
// output has all N rows; the report says so once.
#include "core/ops/ops.h"
#include "core/strategies/strategy.h"

namespace matmulviz {

Tensor runStrategy3(const Tensor& a, const Tensor& c, const Tensor& q, int64_t batch) {
  const int64_t steps = (a.size(0) + batch - 1) / batch;
  std::vector<Tensor> parts;
  parts.reserve(static_cast<size_t>(steps));
  for (int64_t i = 0; i < steps; ++i) {
    const int64_t begin = i * batch, end = i * batch + batch;
    parts.push_back(
        matmul(slice(a, 0, begin, end), index(c, slice(q, 0, begin, end))
                                            .setLabel("c[q[i*b:i*b+b]]")
                                            .setCategory(MemoryCategory::GatheredCopy)));
    parts.back().setLabel("matmul per batch results").setCategory(MemoryCategory::Outputs);
  }
  return cat(parts, 0);
}

}  // namespace matmulviz
