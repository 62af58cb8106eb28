// direct (the forum post's "Directly-4"): out4 = torch.matmul(a, c[q]).
// Both operands are 3-d, so matmul calls bmm; c[q] (N x J x K elements) exists for the whole
// statement, and stays when a requires grad (saved as mat2 of BmmBackward0).
#include "core/ops/ops.h"
#include "core/strategies/strategy.h"

namespace matmulviz {

Tensor runDirect(const Tensor& a, const Tensor& c, const Tensor& q, int64_t /*batch*/) {
  return matmul(a, index(c, q).setLabel("c[q]").setCategory(MemoryCategory::GatheredCopy));
}

}  // namespace matmulviz
