#include "core/memory/attention_temporaries.h"

#include <algorithm>

namespace matmulviz {

namespace {

int64_t ceilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

int64_t alignUp(int64_t a, int64_t b) {
  return ceilDiv(a, b) * b;
}

}  // namespace

std::vector<TemporaryStep> efficientAttentionBackwardTemporaries(const AttentionShape& s,
                                                                 int64_t elementBytes,
                                                                 bool gradOutContiguous) {
  std::vector<TemporaryStep> steps;
  const int64_t bh = s.batch * s.heads;
  if (!gradOutContiguous)
    steps.push_back({"grad_out.contiguous() of efficient attention's backward",
                     bh * s.lq * s.dv * elementBytes, -1});
  steps.push_back({"outputs", 0, kOutputsStep});
  const bool half = elementBytes == 2;
  int delta = -1;
  if (half) {
    delta = static_cast<int>(steps.size());
    steps.push_back({"delta of efficient attention's backward", bh * s.lq * 4, -1});
  } else {
    const int product = static_cast<int>(steps.size());
    steps.push_back({"grad_out * out of efficient attention's backward", bh * s.lq * s.dv * 4, -1});
    const int sum = static_cast<int>(steps.size());
    steps.push_back(
        {"(grad_out * out).sum(-1) of efficient attention's backward", bh * s.lq * 4, -1});
    delta = static_cast<int>(steps.size());
    steps.push_back({"delta of efficient attention's backward", bh * s.lq * 4, -1});
    steps.push_back({"", 0, sum});
    steps.push_back({"", 0, product});
  }
  int64_t tileI = 64, tileJ = 64;
  if (half && s.dqk > 64) tileI = 128, tileJ = s.dqk <= 128 ? 128 : 64;
  if (!half && s.dqk > 64) tileI = 128, tileJ = 64;
  const bool accumKV = half && s.dv > 128;
  int64_t splits = ceilDiv(s.lk, tileJ);
  if (bh >= 256 && s.lk <= 2 * tileJ) splits = 1;
  if (accumKV) splits = std::min<int64_t>(splits, bh > 0 ? 200 / bh : splits);
  splits = std::max<int64_t>(splits, 1);
  const int64_t gq = ceilDiv(s.lq, tileI) * ceilDiv(s.dqk, tileJ) * (tileI * tileJ + 4);
  const int64_t gk = accumKV ? splits * tileJ * alignUp(s.dqk, tileI) : 0;
  const int64_t gv = accumKV ? splits * tileJ * alignUp(s.dv, tileI) : 0;
  const int64_t workspace = bh * alignUp(gq + gk + gv, 4) * 4;
  if (bh > 0 && s.lq > 0)
    steps.push_back({"workspace of efficient attention's backward", workspace, -1});
  steps.push_back({"", 0, delta});
  return steps;  // the workspace, then the copy, freed as the op returns
}

}  // namespace matmulviz
