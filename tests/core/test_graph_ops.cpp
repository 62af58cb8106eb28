// The ops compiled joint graphs run for softmax's decompositions (core/ops/pointwise.h): amax
// over one dim (torch/_decomp/decompositions.py: _softmax) and prims.fma (inductor's
// _softmax_backward_data), values against hand-computed ones, shapes, errors, no autograd node.

#include "core/ops/ops.h"
#include "core/ops/pointwise.h"

#include <QtTest/QtTest>

#include <cmath>
#include <limits>
#include <stdexcept>

using namespace matmulviz;

class TestGraphOps : public QObject {
  Q_OBJECT

 private slots:
  void amaxOverOneDim() {
    const Tensor t = fromDoubles({2, 3}, {1, 5, -2, 7, 0, 3}, DType::Float32);
    const Tensor rows = amax(t, -1, true);
    QCOMPARE(rows.sizes(), (Shape{2, 1}));
    QCOMPARE(rows.toDoubles(), (std::vector<double>{5, 7}));
    const Tensor cols = amax(t, 0, false);
    QCOMPARE(cols.sizes(), (Shape{3}));
    QCOMPARE(cols.toDoubles(), (std::vector<double>{7, 5, 3}));
    // a transposed (non-contiguous) input reads its strides: rows of t^T are t's columns
    QCOMPARE(amax(transpose(t, 0, 1), 1, false).toDoubles(), (std::vector<double>{7, 5, 3}));
    const double nan = std::numeric_limits<double>::quiet_NaN();
    QVERIFY(std::isnan(amax(fromDoubles({3}, {1, nan, 2}, DType::Float64), 0, false).item()));
  }

  void amaxErrorsAndNoGraph() {
    Tensor t = fromDoubles({2, 2}, {1, 2, 3, 4}, DType::Float32);
    t.setRequiresGrad(true);
    QVERIFY(!amax(t, 1, true).requiresGrad());
    QVERIFY_THROWS_EXCEPTION(std::out_of_range, amax(t, 2, true));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             amax(fromDoubles({2}, {1, 2}, DType::Int64), 0, true));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             amax(empty({2, 0}, DType::Float32, nullptr, "e"), 1, true));
  }

  void fmaBroadcastsIntoOneTensor() {
    // fma(-out, sum, mul) as softmax's backward uses it: [2, 2] * [2, 1] + [2, 2]
    const Tensor a = fromDoubles({2, 2}, {1, 2, 3, 4}, DType::Float32);
    const Tensor b = fromDoubles({2, 1}, {10, 100}, DType::Float32);
    const Tensor c = fromDoubles({2, 2}, {0.5, 0.25, 1, 2}, DType::Float32);
    const Tensor r = fma(a, b, c);
    QCOMPARE(r.sizes(), (Shape{2, 2}));
    QCOMPARE(r.toDoubles(), (std::vector<double>{10.5, 20.25, 301, 402}));
    QCOMPARE(fma(a, b, fromDoubles({}, {1}, DType::Float32)).toDoubles(),
             (std::vector<double>{11, 21, 301, 401}));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             fma(b, b, fromDoubles({2, 2}, {1, 2, 3, 4}, DType::Float32)));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             fma(a, b, fromDoubles({2, 2}, {1, 2, 3, 4}, DType::Float64)));
  }
};

QTEST_GUILESS_MAIN(TestGraphOps)
#include "test_graph_ops.moc"
