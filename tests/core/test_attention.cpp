// scaled_dot_product_attention (core/ops/attention.h) against the engine's own composition of
// the math formulation (attention.cpp: _scaled_dot_product_attention_math: q @ k^T * scale +
// bias, softmax, @ v, in float32 for 16-bit inputs), forward and gradients, where the Python
// goldens cannot reach: float16 (PyTorch's CPU build has no float16 matmul), inputs transposed
// from [B, L, H, E] as a linear layer's output gives them, a row with every key masked.

#include "core/autograd/node.h"
#include "core/ops/attention.h"
#include "core/ops/pointwise.h"
#include "tests/core/op_check.h"

#include <QtTest/QtTest>

#include <cmath>
#include <limits>

using namespace matmulviz;
using namespace matmulviz::test;

namespace {

/// The math formulation on the engine's ops, in float32 from (possibly 16-bit) inputs.
Tensor composed(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& bias,
                double scale) {
  const Tensor q32 = toDType(q, DType::Float32), k32 = toDType(k, DType::Float32);
  const Tensor v32 = toDType(v, DType::Float32);
  Tensor s = mulScalar(matmul(q32, transpose(k32, -2, -1)), {scale, false});
  if (bias.defined()) s = add(s, toDType(bias, DType::Float32));
  return matmul(softmax(s, -1), v32);
}

/// An additive causal mask [L, S] (0 where j <= i, -inf above), float32.
Tensor causalBias(int64_t l, int64_t s) {
  std::vector<double> values;
  for (int64_t i = 0; i < l; ++i)
    for (int64_t j = 0; j < s; ++j)
      values.push_back(j <= i ? 0.0 : -std::numeric_limits<double>::infinity());
  return fromDoubles({l, s}, values, DType::Float32);
}

/// A fresh leaf holding t's values (the composed side gets its own leaves).
Tensor leafCopy(const Tensor& t) {
  Tensor c = clone(t);
  c.setRequiresGrad(true);
  return c;
}

Tolerance tolerance(DType dtype, const Ref& ref) {
  double maxAbs = 0;
  for (double x : ref.values) maxAbs = std::max(maxAbs, std::abs(x));
  return productTolerance(dtype, maxAbs);
}

/// Runs the fused op and the composition on copies of the same leaves, backward with the same
/// gradient, and compares the output and every leaf's gradient.
void compare(const std::vector<Tensor>& leaves,
             const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& qkvOf,
             const AttentionOptions& options, const Tensor& bias, const std::string& node) {
  std::vector<Tensor> mine, theirs;
  for (const Tensor& t : leaves) {
    mine.push_back(leafCopy(t));
    theirs.push_back(leafCopy(t));
  }
  const auto a = qkvOf(mine), b = qkvOf(theirs);
  const double scale = options.scale.value_or(1.0 / std::sqrt(double(a[0].size(3))));
  const Tensor out = scaledDotProductAttention(a[0], a[1], a[2], options);
  QCOMPARE(QString::fromStdString(out.gradFn()->name()), QString::fromStdString(node));
  const Tensor want = composed(b[0], b[1], b[2], bias, scale);
  const DType dtype = leaves[0].dtype();
  const Ref wantRef = toRef(want);
  OPCHECK(checkTensor(out, wantRef, dtype, tolerance(dtype, wantRef), "output"));
  const Tensor g = randomTensor(out.sizes(), dtype, 99);
  out.backward(g);
  want.backward(toDType(g, DType::Float32));
  for (size_t i = 0; i < leaves.size(); ++i) {
    const Ref gradRef = toRef(theirs[i].grad());
    OPCHECK(checkTensor(mine[i].grad(), gradRef, dtype, tolerance(dtype, gradRef),
                        "grad " + std::to_string(i)));
  }
}

std::vector<Tensor> asIs(const std::vector<Tensor>& t) {
  return t;
}

}  // namespace

class TestAttention : public QObject {
  Q_OBJECT

 private slots:
  void float16FlashCausal() {
    const std::vector<Tensor> leaves = {randomTensor({2, 2, 6, 8}, DType::Float16, 1),
                                        randomTensor({2, 2, 6, 8}, DType::Float16, 2),
                                        randomTensor({2, 2, 6, 8}, DType::Float16, 3)};
    AttentionOptions o;
    o.isCausal = true;
    OPCHECK(compare(leaves, asIs, o, causalBias(6, 6), "ScaledDotProductFlashAttentionBackward0"));
  }

  void float32TransposedFromLinearLayout() {
    // [B, L, H, E] tensors, attended as [B, H, L, E] views (q.transpose(1, 2))
    const std::vector<Tensor> leaves = {randomTensor({2, 5, 3, 4}, DType::Float32, 4),
                                        randomTensor({2, 7, 3, 4}, DType::Float32, 5),
                                        randomTensor({2, 7, 3, 8}, DType::Float32, 6)};
    auto views = [](const std::vector<Tensor>& t) {
      return std::vector<Tensor>{transpose(t[0], 1, 2), transpose(t[1], 1, 2),
                                 transpose(t[2], 1, 2)};
    };
    AttentionOptions o;
    o.scale = 0.7;
    OPCHECK(compare(leaves, views, o, Tensor(), "ScaledDotProductEfficientAttentionBackward0"));
  }

  void bfloat16EfficientWithFloatMask() {
    const std::vector<Tensor> leaves = {randomTensor({1, 2, 4, 8}, DType::BFloat16, 7),
                                        randomTensor({1, 2, 9, 8}, DType::BFloat16, 8),
                                        randomTensor({1, 2, 9, 8}, DType::BFloat16, 9)};
    const Tensor mask = randomTensor({4, 9}, DType::BFloat16, 10);
    AttentionOptions o;
    o.attnMask = mask;
    OPCHECK(compare(leaves, asIs, o, mask, "ScaledDotProductEfficientAttentionBackward0"));
  }

  void fullyMaskedRowIsZero() {
    Tensor q = randomTensor({1, 1, 2, 4}, DType::Float32, 11);
    Tensor k = randomTensor({1, 1, 3, 4}, DType::Float32, 12);
    Tensor v = randomTensor({1, 1, 3, 4}, DType::Float32, 13);
    for (Tensor* t : {&q, &k, &v}) t->setRequiresGrad(true);
    AttentionOptions o;
    o.attnMask = fromDoubles({2, 3}, {1, 0, 1, 0, 0, 0}, DType::Bool);  // row 1: no key
    const Tensor out = scaledDotProductAttention(q, k, v, o);
    const std::vector<double> values = out.toDoubles();
    for (int64_t d = 4; d < 8; ++d) QCOMPARE(values[d], 0.0);
    out.backward(randomTensor(out.sizes(), DType::Float32, 14));
    for (const Tensor* t : {&q, &k, &v})
      for (double g : t->grad().toDoubles()) QVERIFY(std::isfinite(g));
  }

  void fusedOpsCalledOneByOneMatchTheNode() {
    // What a compiled joint graph runs: the efficient op (float32) and the flash op (float16),
    // then their _backward ops, against the autograd node's forward and backward.
    for (const bool flash : {false, true}) {
      const DType dtype = flash ? DType::Float16 : DType::Float32;
      std::vector<Tensor> leaves = {randomTensor({2, 2, 40, 8}, dtype, 21),
                                    randomTensor({2, 2, 40, 8}, dtype, 22),
                                    randomTensor({2, 2, 40, 8}, dtype, 23)};
      for (Tensor& t : leaves) t.setRequiresGrad(true);
      AttentionOptions o;
      o.isCausal = true;
      const Tensor out = scaledDotProductAttention(leaves[0], leaves[1], leaves[2], o);
      const Tensor g = randomTensor(out.sizes(), dtype, 24);
      out.backward(g);
      const std::vector<Tensor> plain = {randomTensor({2, 2, 40, 8}, dtype, 21),
                                         randomTensor({2, 2, 40, 8}, dtype, 22),
                                         randomTensor({2, 2, 40, 8}, dtype, 23)};  // no grad
      const FusedAttentionOutputs r =
          scaledDotProductFusedAttention(flash, plain[0], plain[1], plain[2], true, true, {});
      QCOMPARE(r.output.toDoubles(), out.toDoubles());
      QCOMPARE(r.output.strides(), out.strides());
      // logsumexp rows: flash L, efficient L rounded up to 32
      QCOMPARE(r.logsumexp.sizes(), (Shape{2, 2, flash ? 40 : 64}));
      QCOMPARE(r.logsumexp.dtype(), DType::Float32);
      QCOMPARE(r.philoxSeed.sizes(), Shape{});
      QCOMPARE(r.philoxOffset.dtype(), DType::Int64);
      const auto grads = scaledDotProductFusedAttentionBackward(
          flash, g, plain[0], plain[1], plain[2], r.output, r.logsumexp, true, {});
      for (size_t i = 0; i < 3; ++i) QCOMPARE(grads[i].toDoubles(), leaves[i].grad().toDoubles());
      QVERIFY(!grads[0].requiresGrad());
      QVERIFY_THROWS_EXCEPTION(
          std::invalid_argument,
          scaledDotProductFusedAttention(!flash, plain[0], plain[1], plain[2], true, true, {}));
      QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                               scaledDotProductFusedAttentionBackward(
                                   flash, transpose(plain[0], 2, 3), plain[0], plain[1], plain[2],
                                   r.output, r.logsumexp, true, {}));
    }
    // without compute_log_sumexp the efficient op's logsumexp has no rows
    const Tensor q = randomTensor({1, 1, 4, 4}, DType::Float32, 25);
    QCOMPARE(scaledDotProductFusedAttention(false, q, q, q, false, false, {}).logsumexp.sizes(),
             (Shape{1, 1, 0}));
  }

  void flopFormulas() {
    // torch/utils/flop_counter.py: sdpa_flop_count and sdpa_backward_flop_count
    QCOMPARE(sdpaFlops(2, 3, 5, 7, 4, 6), int64_t{2 * 2 * 3 * 5 * 7 * (4 + 6)});
    QCOMPARE(sdpaBackwardFlops(2, 3, 5, 7, 4, 6), int64_t{2 * 2 * 3 * 5 * 7 * (3 * 4 + 2 * 6)});
  }
};

QTEST_GUILESS_MAIN(TestAttention)
#include "test_attention.moc"
