// TensorGridModel: 2D and 3D tensors (any float dtype), slices along the chosen axis, values
// as in the tensor, min/max, differences, errors; real dA/dC of the small preset on cpu.
// Under QAbstractItemModelTester.

#include "tests/models/strategies_fixture.h"
#include "ui/models/tensor_grid_model.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QtTest/QtTest>

#include <numeric>

using namespace matmulviz;
using namespace matmulviz::ui;
Q_DECLARE_METATYPE(matmulviz::DType)

class TestTensorGridModel : public QObject {
  Q_OBJECT
 private slots:
  void slicesShowTheTensor_data();
  void slicesShowTheTensor();
  void gradientsOfTwoStrategiesAgree();
  void refusesWhatItCannotShow();
  void csvOfTheSlice();
};

namespace {

/// Values 0, 1, 2, ... minus half the count, so that there are negatives.
Tensor ramp(const Shape& sizes, DType dtype) {
  std::vector<double> v(size_t(numelOf(sizes)));
  std::iota(v.begin(), v.end(), 0.0);
  for (double& x : v) x -= double(v.size()) / 2;
  return fromDoubles(sizes, v, dtype);
}

}  // namespace

void TestTensorGridModel::slicesShowTheTensor_data() {
  QTest::addColumn<QList<qint64>>("sizes");
  QTest::addColumn<DType>("dtype");
  QTest::addColumn<int>("axis");  // expected default slice axis
  QTest::newRow("2D 5x7 float32") << QList<qint64>{5, 7} << DType::Float32 << 0;
  QTest::newRow("3D dC-like 4x9x3 float64") << QList<qint64>{4, 9, 3} << DType::Float64 << 0;
  QTest::newRow("3D dA-like 13x1x6 float16") << QList<qint64>{13, 1, 6} << DType::Float16 << 1;
  QTest::newRow("3D 3x2x5 bfloat16") << QList<qint64>{3, 2, 5} << DType::BFloat16 << 1;
  QTest::newRow("3D 2x4x5 float32") << QList<qint64>{2, 4, 5} << DType::Float32 << 0;
  QTest::newRow("1D 11") << QList<qint64>{11} << DType::Float32 << 0;
}

void TestTensorGridModel::slicesShowTheTensor() {
  QFETCH(QList<qint64>, sizes);
  QFETCH(DType, dtype);
  QFETCH(int, axis);
  const Shape shape(sizes.begin(), sizes.end());
  const Tensor t = ramp(shape, dtype);
  const std::vector<double> v = t.toDoubles();
  TensorGridModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  QSignalSpy changed(&model, &TensorGridModel::sliceChanged);
  model.setTensor(t, "t");
  QCOMPARE(model.sliceAxis(), axis);
  const QList<qint64> full = sizes.size() == 1 ? QList<qint64>{1, sizes[0]} : sizes;
  QList<qint64> rest = full;
  if (full.size() == 3) rest.removeAt(axis);
  QCOMPARE(model.sliceCount(), full.size() == 3 ? int(full[axis]) : 1);
  for (int s = 0; s < model.sliceCount(); ++s) {
    model.setSlice(s);
    QCOMPARE(model.slice(), s);
    QCOMPARE(model.rows(), int(rest[0]));
    QCOMPARE(model.cols(), int(rest[1]));
    double lo = INFINITY, hi = -INFINITY;
    for (int r = 0; r < model.rows(); ++r)
      for (int c = 0; c < model.cols(); ++c) {
        qint64 idx[3] = {r, c, 0};
        if (full.size() == 3) {
          qint64 k = 0;
          for (int d = 0; d < 3; ++d) idx[d] = d == axis ? s : (k++ == 0 ? r : c);
        }
        const qint64 flat = full.size() == 3 ? (idx[0] * full[1] + idx[1]) * full[2] + idx[2]
                                             : qint64(r) * full[1] + c;
        QCOMPARE(model.value(r, c), v[size_t(flat)]);
        QCOMPARE(model.index(r, c).data(TensorGridModel::RawRole).toDouble(), v[size_t(flat)]);
        lo = std::min(lo, v[size_t(flat)]);
        hi = std::max(hi, v[size_t(flat)]);
      }
    QCOMPARE(model.minValue(), lo);
    QCOMPARE(model.maxValue(), hi);
  }
  QCOMPARE(changed.size(), model.sliceCount());
  model.setSlice(1000);  // clamped
  QCOMPARE(model.slice(), model.sliceCount() - 1);
  QVERIFY(std::isnan(model.value(-1, 0)));
  QVERIFY(std::isnan(model.value(0, model.cols())));
}

void TestTensorGridModel::gradientsOfTwoStrategiesAgree() {
  const StrategiesReport report =
      testing::runSmall({DeviceKind::Cpu, true, true, true, {"strategy3", "fused"}});
  const Tensor& dA1 = report.runs[0].backward.dA;
  const Tensor& dA2 = report.runs[1].backward.dA;
  const Tensor& dC1 = report.runs[0].backward.dC;
  QVERIFY(dA1.defined() && dA2.defined() && dC1.defined());
  TensorGridModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  model.setTensor(dC1, "dC, strategy3");  // [M, J, K] = [64, 16, 24]: J x K per m
  QCOMPARE(model.sliceAxis(), 0);
  QCOMPARE(model.sliceCount(), 64);
  QCOMPARE(model.rows(), 16);
  QCOMPARE(model.cols(), 24);
  QCOMPARE(model.value(3, 5), dC1.toDoubles()[3 * 24 + 5]);
  model.setTensor(dA1, "dA, strategy3");  // [N, I, J] = [1000, 2, 16]: N x J per i
  QCOMPARE(model.sliceAxis(), 1);
  QCOMPARE(model.sliceCount(), 2);
  QCOMPARE(model.rows(), 1000);
  const double diff = TensorGridModel::maxAbsDiff(dA1, dA2);
  QVERIFY(diff >= 0);
  QVERIFY2(diff <= 1e-4 * model.maxAbsValue(), qPrintable(QString::number(diff)));
  model.setDifference(dA1, dA2, "dA: strategy3 - fused");
  QCOMPARE(std::max(std::abs(model.minValue()), std::abs(model.maxValue())) <= diff, true);
  QVERIFY(std::isnan(TensorGridModel::maxAbsDiff(dA1, dC1)));  // shapes differ
  QVERIFY(std::isnan(TensorGridModel::maxAbsDiff(Tensor{}, dC1)));
}

void TestTensorGridModel::refusesWhatItCannotShow() {
  TensorGridModel model;
  QVERIFY_THROWS_EXCEPTION(std::invalid_argument, model.setTensor(Tensor{}, "x"));
  QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                           model.setTensor(ramp({2, 2, 2, 2}, DType::Float32), "x"));
  QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                           model.setTensor(fromDoubles({3}, {1, 2, 3}, DType::Int64), "x"));
  QVERIFY_THROWS_EXCEPTION(
      std::invalid_argument,
      model.setDifference(ramp({2, 3}, DType::Float32), ramp({3, 2}, DType::Float32), "x"));
  QCOMPARE(model.rowCount(), 0);
}

void TestTensorGridModel::csvOfTheSlice() {
  TensorGridModel model;
  model.setTensor(fromDoubles({2, 3}, {1, 2, 3, 4, 5, 6.5}, DType::Float64), "x");
  QCOMPARE(model.toCsv(), QString("row,0,1,2\n0,1,2,3\n1,4,5,6.5\n"));
  model.clear();
  QCOMPARE(model.sliceCount(), 0);
  QCOMPARE(model.toCsv(), QString("row\n"));
}

QTEST_GUILESS_MAIN(TestTensorGridModel)
#include "test_tensor_grid_model.moc"
