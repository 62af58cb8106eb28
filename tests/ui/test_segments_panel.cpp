// The Memory view's segments panel, offscreen: an opened snapshot (a training loop on a
// simulation of the caching allocator, tests/reference/make_allocator_snapshot.py) shows the
// allocator state at the timeline's peak; a table row, a click on the chart, the spin box and
// Left/Right choose the event, and the table and the chart's marker follow; hovering a block
// names it; a snapshot held in the store works the same; a Python run hides the panel; a
// snapshot too large for the replay shows it disabled with the reason. The panel's model runs
// under QAbstractItemModelTester.

#include "core/io/snapshot_allocation_bands.h"
#include "ui/charts/allocation_bands_chart.h"
#include "ui/charts/event_picker.h"
#include "ui/charts/memory_timeline_chart.h"
#include "ui/models/allocator_state_model.h"
#include "ui/models/memory_timeline_model.h"
#include "ui/widgets/file_loader.h"
#include "ui/widgets/main_window.h"
#include "ui/widgets/memory_view.h"
#include "ui/widgets/segments_canvas.h"
#include "ui/widgets/segments_panel.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QComboBox>
#include <QLabel>
#include <QSettings>
#include <QSpinBox>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest/QtTest>

using namespace matmulviz;
using namespace matmulviz::ui;

namespace {

constexpr int kLoadMs = 60'000;
const QString kSim = QStringLiteral(MATMULVIZ_SNAPSHOT_DIR "/allocator_sim_p4.pickle");

}  // namespace

class TestSegmentsPanel : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  bool open(MainWindow& w, const QString& path) {
    w.openFiles({path});
    return w.fileLoader()->wait(kLoadMs);
  }

 private slots:
  void initTestCase() {
    QCoreApplication::setOrganizationName("matmulviz-tests");
    QCoreApplication::setApplicationName("test_segments_panel");
    QSettings().clear();
  }
  void opensAtThePeak();
  void tableChartAndKeysChooseTheEvent();
  void hoverNamesTheBlock();
  void storedSnapshot();
  void pythonRunHidesThePanel();
  void tooLargeShowsTheReason();
};

void TestSegmentsPanel::opensAtThePeak() {
  MainWindow w(dir_.filePath("history.json"));
  w.resize(1500, 950);
  w.show();
  QVERIFY(open(w, kSim));
  SegmentsPanel* panel = w.memoryView()->segments();
  QVERIFY(panel->isVisibleTo(&w));
  QVERIFY(panel->isEnabled());
  AllocatorStateModel* model = panel->model();
  QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  const auto* h = model->history();
  QVERIFY(h);
  const int peak = w.memoryView()->model()->peakEvent();
  QVERIFY(peak > 0);
  QCOMPARE(model->event(), h->traceEventOfTimelineRow(peak));
  // At the peak, the active blocks' requests are the timeline's peak (which counts each block at
  // its trace event's size: the request).
  QCOMPARE(model->state().requestedBytes, w.memoryView()->model()->peakAllocatedBytes());
  QCOMPARE(model->rowCount(), int(model->state().segments.size()));
  QVERIFY(model->rowCount() >= 2);
  int blocks = 0;
  for (int s = 0; s < model->rowCount(); ++s) {
    const QModelIndex segment = model->index(s, 0);
    QCOMPARE(model->rowCount(segment), model->blockCount(s));
    blocks += model->rowCount(segment);
    QCOMPARE(model->index(0, 0, segment).parent(), segment);
  }
  QCOMPARE(blocks, int(model->state().blocks.size()));
  auto* table = w.memoryView()->findChild<QTableView*>("memoryEvents");
  QCOMPARE(table->currentIndex().row(), h->timelineRowOfTraceEvent(model->event()));
  const QString totals = panel->findChild<QLabel*>("segmentsTotals")->text();
  QVERIFY2(totals.contains("reserved") && totals.contains("fragmentation"), qPrintable(totals));
  QVERIFY(panel->findChild<QLabel*>("segmentsEventText")->text().startsWith("after event"));
}

void TestSegmentsPanel::tableChartAndKeysChooseTheEvent() {
  MainWindow w(dir_.filePath("history.json"));
  w.resize(1500, 950);
  w.show();
  QVERIFY(open(w, kSim));
  QVERIFY(QTest::qWaitForWindowExposed(&w));
  SegmentsPanel* panel = w.memoryView()->segments();
  const auto* h = panel->model()->history();
  auto* table = w.memoryView()->findChild<QTableView*>("memoryEvents");
  // A row of the table.
  table->selectionModel()->setCurrentIndex(table->model()->index(40, 0),
                                           QItemSelectionModel::ClearAndSelect);
  QCOMPARE(panel->traceEvent(), h->traceEventOfTimelineRow(40));
  auto* picker = w.memoryView()->chart()->findChild<EventPicker*>();
  QVERIFY(picker);
  QCOMPARE(picker->markedEvent(), double(h->timelineRowOfTraceEvent(panel->traceEvent())));
  // The spin box counts the table's events: the table follows, the state is its trace entry's.
  auto* spin = panel->findChild<QSpinBox*>("segmentsEvent");
  QCOMPARE(qint64(spin->maximum()), h->timelineEventCount() - 1);
  spin->setValue(200);
  QCOMPARE(panel->event(), int64_t(200));
  QCOMPARE(panel->traceEvent(), h->traceEventOfTimelineRow(200));
  QCOMPARE(table->currentIndex().row(), 200);
  QCOMPARE(panel->event(), int64_t(200));  // the table's echo did not move it
  // Left/Right while the panel has focus, before the window's shortcuts (the Kernel view's).
  spin->setFocus();
  QTest::keyClick(spin, Qt::Key_Right);
  QCOMPARE(panel->event(), int64_t(201));
  QCOMPARE(panel->traceEvent(), h->traceEventOfTimelineRow(201));
  QTest::keyClick(spin, Qt::Key_Left);
  QTest::keyClick(spin, Qt::Key_Left);
  QCOMPARE(panel->event(), int64_t(199));
  spin->setValue(-1);
  QVERIFY(panel->model()->state().segments.empty());
  QVERIFY(panel->findChild<QLabel*>("segmentsEventText")->text().startsWith("before the first"));
  // A click on the bands (stacked by allocation, the snapshot's default): the trace event of
  // that step.
  auto plotOf = [](QWidget* chart) {
    QWidget* plot = nullptr;
    for (QWidget* c : chart->findChildren<QWidget*>())
      if (c->inherits("QCustomPlot")) plot = c;
    return plot;
  };
  QWidget* bands = plotOf(w.memoryView()->bandsChart());
  QVERIFY(bands && bands->isVisible());
  auto* bandsPicker = w.memoryView()->bandsChart()->findChild<EventPicker*>();
  QVERIFY(bandsPicker);
  const int mid = bands->width() / 2;
  QTest::mouseClick(bands, Qt::LeftButton, {}, QPoint(mid, bands->height() / 2));
  const auto* device = w.memoryView()->bandsChart()->device();
  QVERIFY(device);
  QCOMPARE(panel->traceEvent(),
           snapshot::eventAtStep(device->bands, double(bandsPicker->eventAtPixel(mid))));
  // A click on the category chart at event 100 (not a drag).
  auto* stackBy = w.memoryView()->findChild<QComboBox*>("memoryStackBy");
  stackBy->setCurrentIndex(0);
  emit stackBy->activated(0);
  QWidget* plot = plotOf(w.memoryView()->chart());
  QVERIFY(plot && plot->isVisible());
  int px = -1;
  for (int x = 0; x < plot->width() && px < 0; ++x)
    if (picker->eventAtPixel(x) == 100) px = x;
  QVERIFY(px >= 0);
  QTest::mouseClick(plot, Qt::LeftButton, {}, QPoint(px, plot->height() / 2));
  QCOMPARE(panel->traceEvent(), h->traceEventOfTimelineRow(100));
  QCOMPARE(table->currentIndex().row(), h->timelineRowOfTraceEvent(panel->traceEvent()));
}

void TestSegmentsPanel::hoverNamesTheBlock() {
  MainWindow w(dir_.filePath("history.json"));
  w.resize(1500, 950);
  w.show();
  QVERIFY(open(w, kSim));
  QVERIFY(QTest::qWaitForWindowExposed(&w));
  SegmentsPanel* panel = w.memoryView()->segments();
  const AllocatorStateModel* model = panel->model();
  int allocated = -1, free = -1;
  for (size_t b = 0; b < model->state().blocks.size(); ++b) {
    const QRectF r = panel->canvas()->blockRect(int(b));
    if (r.width() < 6) continue;
    const auto state = model->state().blocks[b].state;
    if (state == snapshot::BlockState::ActiveAllocated && allocated < 0) allocated = int(b);
    if (state == snapshot::BlockState::Inactive && free < 0) free = int(b);
  }
  QVERIFY(allocated >= 0 && free >= 0);
  const QString text =
      panel->canvas()->textAt(panel->canvas()->blockRect(allocated).center().toPoint());
  QVERIFY2(text.contains("allocated (requested") && text.contains("train.py:60:main"),
           qPrintable(text));
  QCOMPARE(text, model->blockText(allocated));
  QVERIFY(panel->canvas()
              ->textAt(panel->canvas()->blockRect(free).center().toPoint())
              .startsWith("free block"));
  const QRectF seg = panel->canvas()->segmentRect(0);
  QVERIFY(panel->canvas()
              ->textAt(QPoint(int(seg.left()) + 1, int(seg.bottom()) + 4))
              .startsWith("segment "));
  QVERIFY(panel->canvas()->textAt(QPoint(2, 2)).isEmpty());
}

// A snapshot held in the timeline store (as one of millions of events is) keeps its panel.
void TestSegmentsPanel::storedSnapshot() {
  const OpenedFile file = loadFile(kSim, {}, nullptr, 10);
  QVERIFY(file.store);
  QCOMPARE(file.allocatorHistories.size(), 1);
  MemoryView view;
  view.resize(1400, 900);
  view.setStore(file.fileName, file.store, file.note);
  view.setAllocatorHistories(file.allocatorHistories, file.allocatorNote);
  view.show();
  SegmentsPanel* panel = view.segments();
  QVERIFY(panel->isVisibleTo(&view));
  auto* table = view.findChild<QTableView*>("memoryStoredEvents");
  QCOMPARE(panel->parentWidget(), table->parentWidget());  // beside the stored events
  table->selectionModel()->setCurrentIndex(table->model()->index(30, 0),
                                           QItemSelectionModel::ClearAndSelect);
  QCOMPARE(panel->traceEvent(), panel->model()->history()->traceEventOfTimelineRow(30));
}

void TestSegmentsPanel::pythonRunHidesThePanel() {
  MainWindow w(dir_.filePath("history.json"));
  w.show();
  QVERIFY(open(w, kSim));
  QVERIFY(w.memoryView()->segments()->isVisibleTo(&w));
  QVERIFY(open(w, MATMULVIZ_REPORT_DIR "/python_small_run.json"));
  QVERIFY(!w.memoryView()->segments()->isVisibleTo(&w));
  QVERIFY(!w.memoryView()->segments()->model()->history());
}

void TestSegmentsPanel::tooLargeShowsTheReason() {
  const OpenedFile file = loadFile(kSim);
  MemoryView view;
  view.setTimelines(file.fileName, "Device", file.timelines, file.note);
  view.setAllocatorHistories({}, "too many events");
  view.show();
  SegmentsPanel* panel = view.segments();
  QVERIFY(panel->isVisibleTo(&view));
  QVERIFY(!panel->isEnabled());
  QCOMPARE(panel->unavailableReason(), QStringLiteral("too many events"));
  QCOMPARE(panel->findChild<QLabel*>("segmentsEventText")->text(),
           QStringLiteral("too many events"));
}

QTEST_MAIN(TestSegmentsPanel)
#include "test_segments_panel.moc"
