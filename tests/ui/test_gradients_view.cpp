// The Gradients view, offscreen: its slice spinner counts slices as the heatmap's title does,
// from 1 ("slice 1 of 2" beside "1 of 2", never "0 of 2").

#include "tests/models/strategies_fixture.h"
#include "ui/charts/heatmap_chart.h"
#include "ui/models/tensor_grid_model.h"
#include "ui/widgets/gradients_view.h"

#include <QApplication>
#include <QSpinBox>
#include <QtTest/QtTest>

using namespace matmulviz;
using namespace matmulviz::ui;

class TestGradientsView : public QObject {
  Q_OBJECT
 private slots:
  void sliceNumbersMatchTheTitle_data();
  void sliceNumbersMatchTheTitle();
};

void TestGradientsView::sliceNumbersMatchTheTitle_data() {
  QTest::addColumn<QString>("tensor");
  QTest::addColumn<QString>("strategy");
  QTest::addRow("dA of direct") << "dA"
                                << "direct";
  QTest::addRow("dC of fused") << "dC"
                               << "fused";
}

void TestGradientsView::sliceNumbersMatchTheTitle() {
  QFETCH(QString, tensor);
  QFETCH(QString, strategy);
  testing::SmallRun run{DeviceKind::Cpu, true, true, true, {"direct", "fused"}};
  run.n = 3;  // dA [3, 2, 16]: 3 slices
  auto report = std::make_shared<const StrategiesReport>(testing::runSmall(run));
  GradientsView view;
  view.setReport(report);
  view.select(tensor, strategy);
  auto* spin = view.findChild<QSpinBox*>("gradSlice");
  QVERIFY(spin);
  const int slices = view.model()->sliceCount();
  QVERIFY(slices > 1);
  QCOMPARE(spin->minimum(), 1);
  QCOMPARE(spin->maximum(), slices);
  QCOMPARE(spin->value(), 1);
  QCOMPARE(spin->suffix(), QString(" of %1").arg(slices));
  QVERIFY(view.chart()->title().endsWith(QString("slice 1 of %1").arg(slices)));
  spin->setValue(slices);
  QCOMPARE(view.model()->slice(), slices - 1);
  QVERIFY2(view.chart()->title().endsWith(QString("slice %1 of %1").arg(slices)),
           qPrintable(view.chart()->title()));
}

int main(int argc, char** argv) {
  if (!qEnvironmentVariableIsSet("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  TestGradientsView t;
  return QTest::qExec(&t, argc, argv);
}

#include "test_gradients_view.moc"
