// A snapshot of 200 000 events opened through the timeline store (the threshold lowered so
// that a test-sized file takes that path) and shown in the Memory view offscreen: the header and
// the chart name the store's peak, the columns follow the zoom (levels of detail when zoomed
// out, single events when zoomed in), the hover text names the event's stack, cancel leaves no
// store behind, and the store's file goes when its last holder does.

#include "core/io/pickle_reader.h"
#include "core/io/timeline_store.h"
#include "core/util/format_units.h"
#include "tests/common/snapshot_generator.h"
#include "ui/charts/big_timeline_chart.h"
#include "ui/models/stored_events_model.h"
#include "ui/widgets/memory_view.h"

#include <QApplication>
#include <QDir>
#include <QLabel>
#include <QTemporaryDir>
#include <QtTest/QtTest>

using namespace matmulviz;
using namespace matmulviz::ui;

namespace {

QStringList storesInTemp() {
  return QDir::temp().entryList({"matmulviz-timeline-*.sqlite"}, QDir::Files);
}

}  // namespace

class TestBigTimelineView : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir dir_;
  QString snapshot_;

 private slots:
  void initTestCase() {
    snapshot_ = dir_.filePath("big.pickle");
    testing::SnapshotGenerator::write(snapshot_.toStdString(), 200000, 500, 5);
  }

  void opensThroughTheStore() {
    std::vector<double> fractions;
    OpenedFile file = loadFile(
        snapshot_, [&](double f) { fractions.push_back(f); }, nullptr, 100000);
    QVERIFY(file.store);
    QVERIFY(!file.timelines);
    QCOMPARE(file.traceEntryCount, size_t(200000));
    QCOMPARE(file.eventCount, size_t(200001));  // the events the header counts
    QVERIFY(std::is_sorted(fractions.begin(), fractions.end()));
    QCOMPARE(fractions.back(), 1.0);
    const store::DeviceInfo device = file.store->devices().at(0);
    // The trace's events and one before them: the segment reserved when recording began.
    QCOMPARE(device.events, int64_t(200001));

    MemoryView view;
    view.resize(1200, 800);
    view.show();
    view.setStore(file.fileName, file.store, file.note);
    QApplication::processEvents();
    BigTimelineChart* chart = view.bigChart();
    chart->replotNow();
    QVERIFY(view.hasTimeline());
    QCOMPARE(view.storedEvents()->rowCount(), 200001);  // the table, read as scrolled
    const QString peak = QString::fromStdString(formatSize(device.peakAllocated));
    const QString header = view.findChild<QLabel*>("memorySummary")->text();
    QVERIFY2(header.contains("big.pickle, cuda:0: 200,001 events (allocations, frees and "
                             "segment changes); peak allocated " +
                             peak),
             qPrintable(header));
    QVERIFY(chart->texts().contains(
        QStringLiteral("peak %1 at event %2").arg(peak, QLocale().toString(device.peakIndex))));

    // Zoomed out: one column a pixel at most, and the columns' maxima reach the peak.
    QVERIFY(chart->columnCount() > 500);
    QVERIFY(chart->columnCount() <= chart->width());
    const QStringList rows = chart->csv().split('\n', Qt::SkipEmptyParts);
    double top = 0;
    for (const QString& row : rows.mid(1)) top = std::max(top, row.split(',')[3].toDouble());
    QCOMPARE(qRound64(top * 1024 * 1024 / 4096), qRound64(double(device.peakAllocated) / 4096));
    // Zoomed in to 300 events: every event its own column.
    chart->setVisibleRange(150000, 150300);
    chart->replotNow();
    QCOMPARE(chart->columnCount(), 300);
    // Panned to the end: the range stays within the timeline.
    chart->setVisibleRange(199900, 200400);
    chart->replotNow();
    QCOMPARE(chart->columnCount(), 500);  // [199501, 200001)

    const QString hover = chart->eventText(device.peakIndex);
    QVERIFY2(hover.contains("alloc") && hover.contains("layer") && hover.contains(peak),
             qPrintable(hover));
    QVERIFY(chart->eventText(device.events).isEmpty());

    const QString lookAt = qEnvironmentVariable("MATMULVIZ_CHART_PNG_DIR");
    if (!lookAt.isEmpty()) {
      chart->setVisibleRange(0, 200000);
      chart->exportTo(lookAt + "/big-timeline-200k.png");
    }
  }

  void smallSnapshotsStayInMemory() {
    const OpenedFile file = loadFile(snapshot_);  // 200 000 events: under the threshold
    QVERIFY(!file.store);
    QVERIFY(file.timelines);
  }

  void storeFileGoesWithItsLastHolder() {
    OpenedFile file = loadFile(snapshot_, {}, nullptr, 0);
    const QString path = QString::fromStdString(file.store->path());
    QVERIFY(QFile::exists(path));
    file.store.reset();
    QVERIFY(!QFile::exists(path));
  }

  // A store left by a process that no longer runs (killed while showing it) is removed by the
  // next open.
  void staleStoresRemoved() {
    const QString stale = QDir::temp().filePath("matmulviz-timeline-999999999-abcdef.sqlite");
    const QString alive =
        QDir::temp().filePath(QStringLiteral("matmulviz-timeline-%1-abcdef.sqlite")
                                  .arg(QCoreApplication::applicationPid()));
    for (const QString& f : {stale, alive}) {
      QFile file(f);
      QVERIFY(file.open(QIODevice::WriteOnly));
    }
    const OpenedFile file = loadFile(snapshot_, {}, nullptr, 0);
    QVERIFY(!QFile::exists(stale));
    QVERIFY(QFile::exists(alive));  // this process's
    QFile::remove(alive);
  }

  void cancelLeavesNoStore() {
    const QStringList before = storesInTemp();
    std::atomic<bool> cancel{false};
    // Cancelled once the parse is done: while the store is written.
    auto progress = [&](double f) {
      if (f >= 0.7) cancel = true;
    };
    QVERIFY_THROWS_EXCEPTION(pickle::Cancelled, loadFile(snapshot_, progress, &cancel, 0));
    QCOMPARE(storesInTemp(), before);
  }
};

QTEST_MAIN(TestBigTimelineView)
#include "test_big_timeline_view.moc"
