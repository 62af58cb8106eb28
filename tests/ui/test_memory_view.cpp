// The Memory view, offscreen: its header and its chart name one peak, the model's (the forward
// peak's value was paired with the backward peak's event); "scale to allocated" follows the
// chart; the chart keeps room for its axis title.

#include "tests/models/strategies_fixture.h"
#include "ui/charts/memory_timeline_chart.h"
#include "ui/models/memory_timeline_model.h"
#include "ui/widgets/memory_view.h"

#include <QApplication>
#include <QCheckBox>
#include <QLabel>
#include <QtTest/QtTest>

using namespace matmulviz;
using namespace matmulviz::ui;

class TestMemoryView : public QObject {
  Q_OBJECT
 private slots:
  void onePeakInHeaderAndChart_data();
  void onePeakInHeaderAndChart();
};

void TestMemoryView::onePeakInHeaderAndChart_data() {
  QTest::addColumn<QString>("strategy");
  QTest::addColumn<bool>("backward");
  for (const char* s : {"strategy1", "direct"}) {
    QTest::addRow("%s, forward only", s) << QString(s) << false;
    QTest::addRow("%s, with backward", s) << QString(s) << true;
  }
}

void TestMemoryView::onePeakInHeaderAndChart() {
  QFETCH(QString, strategy);
  QFETCH(bool, backward);
  // The case: the small preset, a requires grad, backward (its peak is in backward).
  auto report = std::make_shared<const StrategiesReport>(
      testing::runSmall({DeviceKind::Meta, true, false, backward, {strategy.toStdString()}}));
  MemoryView view;
  view.resize(1200, 800);
  view.setReport(report);
  const MemoryTimelineModel* model = view.model();
  const QString peak = model->peakText();
  QVERIFY(!peak.isEmpty());
  const QString header = view.findChild<QLabel*>("memorySummary")->text();
  QVERIFY2(header.contains("peak allocated " + peak), qPrintable(header));
  QVERIFY(view.chart()->showsPeak("peak " + peak));
  // maxMem (the statement's peak) is named as such, only when backward went higher
  QCOMPARE(header.contains("maxMem of the statement"),
           model->statementPeakEvent() != model->peakEvent());
  if (backward) QVERIFY(model->peakAllocatedBytes() >= report->runs[0].peak.allocatedBytes);
  auto* scale = view.findChild<QCheckBox*>("memoryScaleToAllocated");
  QVERIFY(scale);
  QCOMPARE(scale->isChecked(), view.chart()->scaleToAllocated());
  scale->toggle();
  QCOMPARE(view.chart()->scaleToAllocated(), scale->isChecked());
  QVERIFY(view.chart()->minimumHeight() >= 360);
  const QString lookAt = qEnvironmentVariable("MATMULVIZ_CHART_PNG_DIR");
  if (!lookAt.isEmpty() && backward)
    QVERIFY(view.grab().save(lookAt + "/memory-view-" + strategy + ".png"));
}

int main(int argc, char** argv) {
  if (!qEnvironmentVariableIsSet("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  TestMemoryView t;
  return QTest::qExec(&t, argc, argv);
}

#include "test_memory_view.moc"
