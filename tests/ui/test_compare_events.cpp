// The Compare window's Events page, offscreen: a Python run's report of a program of
// tests/reference/gpu/programs against the real H200 snapshot of the same statements, aligned
// event by event. File > Compare Reports… on the two files shows the first divergence above the
// table and opens the table on it; a snapshot kept on disk (the store of a snapshot of millions
// of events, forced here with a low threshold) is compared the same way. With
// MATMULVIZ_SCREENSHOT_DIR set, the page is saved there as compare-events.png.
#include "ui/models/compare_events_model.h"
#include "ui/models/compared_files.h"
#include "ui/models/open_file.h"
#include "ui/widgets/compare_controller.h"
#include "ui/widgets/compare_window.h"
#include "ui/widgets/diff_color_proxy.h"
#include "ui/widgets/main_window.h"

#include <QtTest/QtTest>

#include <QAbstractItemModelTester>
#include <QElapsedTimer>
#include <QLabel>
#include <QSettings>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>

using namespace matmulviz;
using namespace matmulviz::ui;

namespace {

QString gpu(const QString& path) {
  return QStringLiteral(MATMULVIZ_GPU_DIR "/") + path;
}

}  // namespace

class TestCompareEvents : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

 private slots:
  void initTestCase() {
    QCoreApplication::setOrganizationName("matmulviz-tests");
    QCoreApplication::setApplicationName("test_compare_events");
    QSettings().clear();
  }
  void firstDivergence_data() {
    QTest::addColumn<QString>("run");
    QTest::addColumn<QString>("other");
    QTest::addColumn<int>("divergence");
    QTest::addColumn<QString>("summary");
    QTest::newRow("one more temporary")
        << "runs/mlp_backward_extra_temporary.json"
        << "snapshots/mlp_backward.pickle" << 3
        << "first divergence at row 3, only in A: A: event 3, alloc 4000 B (3.91 KiB) by empty "
           "at mlp_backward_extra_temporary.py:22";
    QTest::newRow("run against its snapshot")
        << "runs/mlp_backward.json"
        << "snapshots/mlp_backward.pickle" << -1 << "no divergence (33 events matched)";
    QTest::newRow("a snapshot against itself")
        << "snapshots/gather_backward.pickle"
        << "snapshots/gather_backward.pickle" << -1 << "no divergence (74 events matched)";
  }
  void firstDivergence() {
    QFETCH(QString, run);
    QFETCH(QString, other);
    QFETCH(int, divergence);
    QFETCH(QString, summary);
    MainWindow w(dir_.filePath("history.json"));
    QSignalSpy done(w.compareController(), &CompareController::compared);
    QSignalSpy failed(w.compareController(), &CompareController::failed);
    w.compareController()->compareFiles(gpu(run), gpu(other));
    QElapsedTimer clock;
    clock.start();
    while (done.size() + failed.size() == 0 && clock.elapsed() < 60'000) QTest::qWait(20);
    QVERIFY2(done.size() == 1,
             failed.isEmpty() ? "timed out" : qPrintable(failed.at(0).at(0).toString()));
    CompareWindow* cw = w.compareController()->compareWindow();
    QVERIFY(cw && cw->isVisible());
    cw->showPage(CompareWindow::Page::Events);
    CompareEventsModel* m = cw->eventsModel();
    QAbstractItemModelTester tester(m, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(m->rowCount() >= 33);
    QCOMPARE(m->firstDivergence(), divergence);
    QVERIFY2(cw->eventsSummary().contains(summary.toHtmlEscaped()),
             qPrintable(cw->eventsSummary()));
    // The table opens on the divergence, drawn as growth (red); a matched row is not coloured.
    const int row = std::max(divergence, 0);
    QCOMPARE(cw->eventsTable()->currentIndex().row(), row);
    const QAbstractItemModel* shown = cw->eventsTable()->model();
    if (divergence == 3) {
      QCOMPARE(shown->data(shown->index(row, CompareEventsModel::Kind)).toString(),
               QString("only in A"));
      QCOMPARE(shown->data(shown->index(row, CompareEventsModel::Kind), Qt::ForegroundRole)
                   .value<QBrush>()
                   .color(),
               DiffColorProxy::growthColor());
      QVERIFY(shown->data(shown->index(row, CompareEventsModel::WhereA))
                  .toString()
                  .contains("extra = torch.empty(1000"));
      QVERIFY(shown->data(shown->index(row, CompareEventsModel::EventB)).toString().isEmpty());
    }
    QVERIFY(!shown->data(shown->index(0, 0), Qt::ForegroundRole).isValid());
    QCOMPARE(shown->data(shown->index(0, CompareEventsModel::EventB)).toString(),
             shown->data(shown->index(0, CompareEventsModel::EventA)).toString());
    const QString shots = qEnvironmentVariable("MATMULVIZ_SCREENSHOT_DIR");
    if (!shots.isEmpty() && divergence == 3) {
      cw->resize(1500, 800);
      QTest::qWait(50);
      QVERIFY(cw->grab().save(shots + "/compare-events.png"));
    }
  }
  void snapshotKeptOnDisk() {
    // A threshold of 10 events puts the snapshot into a store, as one of millions would be.
    const OpenedFile run = loadFile(gpu("snapshots/gather_backward.pickle"));
    const OpenedFile snap = loadFile(gpu("snapshots/gather_backward.pickle"), {}, nullptr, 10);
    QVERIFY(snap.store);
    QVERIFY(!snap.timelines);
    const auto files = compareOpenedFiles(run, snap);
    const ReportComparison& c = files->comparison;
    QVERIFY(c.timelines.empty());
    QCOMPARE(c.sequences.size(), size_t(1));
    QVERIFY(!c.sequences[0].alignment.diverges());
    QCOMPARE(c.sequences[0].alignment.matched, int64_t(74));
    bool noted = false;
    for (const std::string& n : c.notes) noted |= n.find("kept on disk") != std::string::npos;
    QVERIFY(noted);
    CompareWindow cw;
    cw.setComparison(files);
    QCOMPARE(cw.eventsModel()->rowCount(), 74);
    QVERIFY(cw.eventsSummary().contains("no divergence"));
  }
};

QTEST_MAIN(TestCompareEvents)
#include "test_compare_events.moc"
