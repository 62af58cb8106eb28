// The Memory view with a PyTorch memory snapshot, offscreen: "stack by" offers allocation (the
// default) and category; the bands chart draws every allocation of the generated training-step
// snapshot and its hover names the block and its stack; the event table's rows show their
// block's stack; categories come from the frames; a snapshot in a store offers category only and
// says why; a report or a Python run hides the chooser.
#include "tests/common/snapshot_generator.h"
#include "ui/charts/allocation_bands_chart.h"
#include "ui/charts/memory_timeline_chart.h"
#include "ui/models/memory_timeline_model.h"
#include "ui/models/open_file.h"
#include "ui/models/snapshot_allocations.h"
#include "ui/widgets/memory_view.h"

#include <QApplication>
#include <QComboBox>
#include <QHelpEvent>
#include <QStackedWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QToolTip>
#include <QtTest/QtTest>

using namespace matmulviz;
using namespace matmulviz::ui;

namespace {

const QString kFixture = QStringLiteral(MATMULVIZ_SNAPSHOT_DIR "/training_step_p4.pickle");

/// What the main window does with an opened snapshot.
void show(MemoryView& view, const OpenedFile& file) {
  if (file.store)
    view.setStore(file.fileName, file.store, file.note);
  else
    view.setTimelines(file.fileName, QStringLiteral("Device"), file.timelines, file.note);
  view.setSnapshotAllocations(file.allocations);
}

}  // namespace

class TestSnapshotAllocationsView : public QObject {
  Q_OBJECT
 private slots:
  void stackedByAllocation();
  void hoverShowsTheStack();
  void tableRowShowsTheStack();
  void categoriesFromFrames();
  void moreThanTheCapSummarises();
  void storeOffersCategoryOnly();
  void otherTimelinesHideTheChooser();
};

void TestSnapshotAllocationsView::stackedByAllocation() {
  const OpenedFile file = loadFile(kFixture);
  QVERIFY(file.allocations);
  MemoryView view;
  view.resize(1200, 800);
  show(view, file);
  view.show();
  QVERIFY(QTest::qWaitForWindowExposed(&view));
  auto* stackBy = view.findChild<QComboBox*>("memoryStackBy");
  QVERIFY(stackBy && stackBy->isVisible() && stackBy->isEnabled());
  QCOMPARE(stackBy->currentText(), QStringLiteral("allocation"));
  AllocationBandsChart* bands = view.bandsChart();
  QVERIFY(bands->isVisible());
  QVERIFY(!view.chart()->isVisible());
  // 3 parameters alive from the start, 3 steps of 12 tensors, 6 Adam states, 3x3 temporaries.
  QCOMPARE(bands->allocationCount(), 3 + 3 * 12 + 6 + 9);
  QCOMPARE(bands->bandCount(), bands->allocationCount());  // under memory_viz's 15000: all
  QVERIFY(bands->texts().join('\n').contains("peak 106 MiB"));
  QCOMPARE(bands->chartName(), QStringLiteral("memory-allocations-cuda-0"));
  QCOMPARE(bands->csv().count('\n'), bands->bandCount() + 1);
  // Back to category: the category chart, and the bands chart hidden.
  stackBy->setCurrentIndex(0);
  emit stackBy->activated(0);
  QVERIFY(view.chart()->isVisible());
  QVERIFY(!bands->isVisible());
  stackBy->setCurrentIndex(1);
  emit stackBy->activated(1);
  QVERIFY(bands->isVisible());
}

void TestSnapshotAllocationsView::hoverShowsTheStack() {
  const OpenedFile file = loadFile(kFixture);
  MemoryView view;
  view.resize(1200, 800);
  show(view, file);
  view.show();
  QVERIFY(QTest::qWaitForWindowExposed(&view));
  AllocationBandsChart* bands = view.bandsChart();
  bands->replotNow();
  // The bottom band is a parameter alive before the recording (4 MiB at the bottom).
  const QString bottom = bands->textAt(10, 1 << 20);
  QVERIFY2(bottom.contains("allocated before the recording started"), qPrintable(bottom));
  QVERIFY(bottom.contains("/home/user/model.py:8 __init__"));
  // The peak: the band under it was made by the autograd engine.
  const auto* device = file.allocations->device("cuda:0");
  const double step = device->bands.peakStep + 0.5;
  const QString top = bands->textAt(step, double(device->bands.peakBytes) - 1024);
  QVERIFY2(top.contains("category: gradients"), qPrintable(top));
  QVERIFY(top.contains("stack, innermost first:"));
  QVERIFY(top.contains("torch::autograd::Engine::evaluate_function"));
  QVERIFY(top.indexOf("at::_ops::") < top.indexOf("/home/user/train.py"));  // innermost first
  QVERIFY(bands->textAt(step, 10.0 * device->bands.peakBytes).isEmpty());   // above: nothing
  // The mouse over that point shows the same text as a tooltip.
  QWidget* plot = bands->findChild<QWidget*>();
  QVERIFY(plot);
  const QPoint at = bands->positionOf(step, double(device->bands.peakBytes) - 1024);
  QTest::mouseMove(plot, at);
  QTRY_VERIFY(QToolTip::isVisible());
  QCOMPARE(QToolTip::text(), top);
  QToolTip::hideText();
}

void TestSnapshotAllocationsView::tableRowShowsTheStack() {
  const OpenedFile file = loadFile(kFixture);
  MemoryView view;
  view.resize(1200, 800);
  show(view, file);
  view.show();
  QVERIFY(QTest::qWaitForWindowExposed(&view));
  auto* table = view.findChild<QTableView*>("memoryEvents");
  QVERIFY(table);
  // Row 1 is the first parameter's alloc at time 0 (row 0: the segment held at the start).
  const QRect rect = table->visualRect(table->model()->index(1, 1));
  QHelpEvent help(QEvent::ToolTip, rect.center(), table->viewport()->mapToGlobal(rect.center()));
  QApplication::sendEvent(table->viewport(), &help);
  QTRY_VERIFY(QToolTip::isVisible());
  QVERIFY2(QToolTip::text().contains("model.py:8 __init__"), qPrintable(QToolTip::text()));
  QVERIFY(QToolTip::text().contains("block 0x7f2a"));
  QToolTip::hideText();
}

void TestSnapshotAllocationsView::categoriesFromFrames() {
  const OpenedFile file = loadFile(kFixture);
  MemoryView view;
  show(view, file);
  const MemoryTimelineModel* model = view.model();
  auto largest = [&](MemoryCategory c) {
    const auto& s = model->categorySeries(c);
    return *std::max_element(s.begin(), s.end());
  };
  constexpr qint64 MiB = 1 << 20;
  QCOMPARE(largest(MemoryCategory::GatheredCopy), 6 * MiB);  // the embedding's output
  QCOMPARE(largest(MemoryCategory::Outputs), 15 * MiB);      // addmm's and mm's
  QVERIFY(largest(MemoryCategory::Gradients) >= 16 * MiB);
  QCOMPARE(largest(MemoryCategory::Inputs), 0);  // never derived from frames
  QCOMPARE(largest(MemoryCategory::SavedForBackward), 0);
  auto* stackBy = view.findChild<QComboBox*>("memoryStackBy");
  QVERIFY(stackBy->toolTip().contains("torch/optim/"));  // the rules, in the chooser's hover
}

// 20 000 allocations: the 15 000 largest drawn, the rest in the summary, drawn at level of
// detail (its steps outnumber the pixel columns); its hover says what it is.
void TestSnapshotAllocationsView::moreThanTheCapSummarises() {
  QTemporaryDir dir;
  const QString path = dir.filePath("cap.pickle");
  testing::SnapshotGenerator::write(path.toStdString(), 40000, 300, 3);
  const OpenedFile file = loadFile(path);
  MemoryView view;
  view.resize(1200, 800);
  show(view, file);
  view.show();
  QVERIFY(QTest::qWaitForWindowExposed(&view));
  AllocationBandsChart* bands = view.bandsChart();
  bands->replotNow();
  QCOMPARE(bands->allocationCount(), 20000);
  QCOMPARE(bands->bandCount(), 15000);
  QVERIFY(bands->texts().join('\n').contains("the 15000 largest of 20000 allocations"));
  const snapshot::AllocationBands& b = file.allocations->device("cuda:0")->bands;
  const auto widest = std::max_element(b.summarySizes.begin(), b.summarySizes.end());
  QVERIFY(*widest > 0);
  const size_t i = size_t(widest - b.summarySizes.begin());
  const QString text =
      bands->textAt(b.summarySteps[i] + 0.5, double(b.summaryOffsets[i]) + double(*widest) / 2);
  QVERIFY2(text.contains("too small to draw one by one"), qPrintable(text));
}

void TestSnapshotAllocationsView::storeOffersCategoryOnly() {
  const OpenedFile file = loadFile(kFixture, {}, nullptr, 10);  // a store above 10 events
  QVERIFY(file.store);
  QVERIFY(!file.allocations);
  MemoryView view;
  show(view, file);
  view.show();
  QVERIFY(QTest::qWaitForWindowExposed(&view));
  auto* stackBy = view.findChild<QComboBox*>("memoryStackBy");
  QVERIFY(stackBy->isVisible());
  QVERIFY(!stackBy->isEnabled());
  QCOMPARE(stackBy->currentText(), QStringLiteral("category"));
  QVERIFY(stackBy->toolTip().contains("store on disk"));
}

void TestSnapshotAllocationsView::otherTimelinesHideTheChooser() {
  MemoryView view;
  show(view, loadFile(kFixture));
  view.show();
  QVERIFY(QTest::qWaitForWindowExposed(&view));
  auto* stackBy = view.findChild<QComboBox*>("memoryStackBy");
  QVERIFY(stackBy->isVisible());
  view.setReport(nullptr);
  QVERIFY(!stackBy->isVisible());
  QVERIFY(view.chart()->isVisible());
  QVERIFY(!view.bandsChart()->isVisible());
}

int main(int argc, char** argv) {
  if (!qEnvironmentVariableIsSet("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  TestSnapshotAllocationsView t;
  return QTest::qExec(&t, argc, argv);
}

#include "test_snapshot_allocations_view.moc"
