// FLOP counts (core/ops/flop_counter.h) against PyTorch's formulas in
// torch/utils/flop_counter.py: mm_flop = 2 * m * n * k, bmm_flop = 2 * b * m * n * k; ops it
// registers no formula for (aten.dot, aten.mv, pointwise ops, reductions) count 0; matmul and
// einsum count through the mm/bmm they decompose to; backward through its mm/bmm calls.

#include "core/ops/einsum.h"
#include "core/ops/flop_counter.h"
#include "core/ops/ops.h"

#include <QtTest/QtTest>

using namespace matmulviz;

Q_DECLARE_METATYPE(matmulviz::Shape)

namespace {

Tensor leaf(const Shape& sizes, bool requiresGrad = false) {
  Tensor t = zeros(sizes, DType::Float32, nullptr, "x");
  t.setRequiresGrad(requiresGrad);
  return t;
}

Tensor onesLike(const Tensor& t) {
  return fromDoubles(t.sizes(), std::vector<double>(static_cast<size_t>(t.numel()), 1.0),
                     t.dtype());
}

}  // namespace

class TestFlopCounter : public QObject {
  Q_OBJECT

 private slots:
  void formulas() {
    QCOMPARE(mmFlops(3, 5, 7), int64_t{2 * 3 * 5 * 7});
    QCOMPARE(bmmFlops(2, 3, 5, 7), int64_t{2 * 2 * 3 * 5 * 7});
  }

  void mmAndBmm() {
    FlopCounter c;
    mm(leaf({3, 5}), leaf({5, 7}));
    bmm(leaf({2, 3, 5}), leaf({2, 5, 7}));
    QCOMPARE(c.count("aten.mm"), int64_t{2 * 3 * 7 * 5});
    QCOMPARE(c.count("aten.bmm"), int64_t{2 * 2 * 3 * 7 * 5});
    QCOMPARE(c.total(), int64_t{210 + 420});
    QCOMPARE(c.counts().size(), size_t{2});
    QCOMPARE(QString::fromStdString(c.counts()[0].first), QString("aten.mm"));
  }

  /// Nothing is counted outside a counter, and nested counters both count.
  void scopes() {
    mm(leaf({3, 5}), leaf({5, 7}));
    FlopCounter outer;
    {
      FlopCounter inner;
      mm(leaf({3, 5}), leaf({5, 7}));
      QCOMPARE(inner.total(), int64_t{210});
    }
    mm(leaf({1, 1}), leaf({1, 1}));
    QCOMPARE(outer.total(), int64_t{212});
  }

  void matmul_data() {
    QTest::addColumn<Shape>("a");
    QTest::addColumn<Shape>("b");
    QTest::addColumn<QString>("op");
    QTest::addColumn<qint64>("flops");
    QTest::newRow("1d@1d: aten.dot, not registered") << Shape{4} << Shape{4} << "" << qint64{0};
    QTest::newRow("2d@1d: aten.mv, not registered") << Shape{3, 4} << Shape{4} << "" << qint64{0};
    QTest::newRow("1d@2d: mm [1,4]@[4,5]") << Shape{4} << Shape{4, 5} << "aten.mm" << qint64{40};
    QTest::newRow("2d@2d: mm") << Shape{3, 4} << Shape{4, 5} << "aten.mm" << qint64{120};
    QTest::newRow("3d@2d: folded mm [6,4]@[4,5]")
        << Shape{2, 3, 4} << Shape{4, 5} << "aten.mm" << qint64{240};
    QTest::newRow("3d@1d: folded mv") << Shape{2, 3, 4} << Shape{4} << "" << qint64{0};
    QTest::newRow("3d@3d: bmm") << Shape{2, 3, 4} << Shape{2, 4, 5} << "aten.bmm" << qint64{240};
    QTest::newRow("broadcast [2,1,3,4]@[5,4,6]: bmm b=10")
        << Shape{2, 1, 3, 4} << Shape{5, 4, 6} << "aten.bmm" << qint64{2 * 10 * 3 * 6 * 4};
    QTest::newRow("2d@3d: bmm b=2") << Shape{3, 4} << Shape{2, 4, 5} << "aten.bmm" << qint64{240};
  }
  void matmul() {
    QFETCH(Shape, a);
    QFETCH(Shape, b);
    QFETCH(QString, op);
    QFETCH(qint64, flops);
    FlopCounter c;
    matmulviz::matmul(leaf(a), leaf(b));
    QCOMPARE(c.total(), int64_t{flops});
    if (!op.isEmpty()) QCOMPARE(c.count(op.toStdString()), int64_t{flops});
  }

  /// y = (x @ w).sum(): forward 2mnk; backward mm for each input that needs a gradient.
  void forwardAndBackward() {
    const int64_t m = 3, k = 5, n = 7;
    Tensor x = leaf({m, k}, true), w = leaf({k, n}, true);
    FlopCounter fwd;
    Tensor y = sum(mm(x, w));
    QCOMPARE(fwd.total(), mmFlops(m, k, n));
    FlopCounter bwd;
    y.backward(onesLike(y));
    QCOMPARE(bwd.total(), 2 * mmFlops(m, k, n));
    QCOMPARE(bwd.count("aten.mm"), 2 * mmFlops(m, k, n));
  }

  /// The backward of matmul's mv path is MvBackward0 in PyTorch (ger and mv): 0.
  void mvBackwardCountsZero() {
    Tensor a = leaf({3, 4}, true), v = leaf({4}, true);
    Tensor y = sum(matmulviz::matmul(a, v));
    FlopCounter c;
    y.backward(onesLike(y));
    QCOMPARE(c.total(), int64_t{0});
  }

  void pointwiseAndReductionsCountZero() {
    FlopCounter c;
    Tensor a = leaf({3, 4});
    sum(mul(a, a));
    QCOMPARE(c.total(), int64_t{0});
    QVERIFY(c.counts().empty());
  }

  /// einsum contracts through bmm (aten/src/ATen/native/Linear.cpp: sumproduct_pair).
  void einsumCountsItsBmm() {
    FlopCounter c;
    einsum("bik,bkj->bij", {leaf({2, 3, 4}), leaf({2, 4, 5})});
    QCOMPARE(c.count("aten.bmm"), bmmFlops(2, 3, 4, 5));
    QCOMPARE(c.total(), bmmFlops(2, 3, 4, 5));
  }

  /// gather_bmm counts as the bmm it replaces, under its own name, and per gradient backward.
  void gatherBmm() {
    Tensor a = leaf({4, 2, 3}, true), cm = leaf({5, 3, 6}, true);
    Tensor q = fromDoubles({4}, {0, 4, 2, 0}, DType::Int64);
    FlopCounter fwd;
    Tensor y = sum(matmulviz::gatherBmm(a, cm, q));
    QCOMPARE(fwd.count("matmulviz.gather_bmm"), bmmFlops(4, 2, 3, 6));
    FlopCounter bwd;
    y.backward(onesLike(y));
    QCOMPARE(bwd.count("matmulviz.gather_bmm_backward"), 2 * bmmFlops(4, 2, 3, 6));
  }
};

QTEST_GUILESS_MAIN(TestFlopCounter)
#include "test_flop_counter.moc"
