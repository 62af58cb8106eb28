// Opening files in the main window, offscreen, as a user does it (File > Open's openFiles, drag
// and drop, Open Recent): a report's runs join the history and show in the Strategies and
// Memory views, a report without a timeline shows its memory summary, a Python run and a PyTorch
// snapshot show in the Memory view, a preset fills the scenario panel, and a damaged file shows a
// message box naming the file and the problem while everything already open stays.
#include "core/report/report_json.h"
#include "core/strategies/runner.h"
#include "ui/models/memory_timeline_model.h"
#include "ui/models/run_history.h"
#include "ui/widgets/file_loader.h"
#include "ui/widgets/main_window.h"
#include "ui/widgets/memory_view.h"
#include "ui/widgets/scenario_panel.h"

#include <QtTest/QtTest>

#include <QAbstractItemModelTester>
#include <QElapsedTimer>
#include <QMenu>
#include <QMessageBox>
#include <QMimeData>
#include <QProcess>
#include <QSettings>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTimer>

using namespace matmulviz;
using namespace matmulviz::ui;

namespace {

constexpr int kLoadMs = 60'000;

QByteArray reportJson(bool timeline) {
  RunConfig c;
  c.workload = {48, 6, 2, 4, 3, 16, DType::Float32};
  c.repeats = 1;
  c.requiresGrad.a = true;
  c.recordTimeline = timeline;
  StrategyRunner runner(c, makeRandomInputs(c.workload, 2));
  return QByteArray::fromStdString(toJson(runner.run(), TimelineInJson::Include).dump(2));
}

QMessageBox* errorBox(MainWindow& w) {
  return w.findChild<QMessageBox*>("openErrorBox");
}

}  // namespace

class TestOpenFiles : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QString write(const QString& name, const QByteArray& bytes) {
    QFile f(dir_.filePath(name));
    if (!f.open(QIODevice::WriteOnly)) return {};
    f.write(bytes);
    return f.fileName();
  }
  QString historyPath() const { return dir_.filePath("history.json"); }
  bool open(MainWindow& w, const QStringList& paths) {
    w.openFiles(paths);
    return w.fileLoader()->wait(kLoadMs);
  }

 private slots:
  void initTestCase() {
    QCoreApplication::setOrganizationName("matmulviz-tests");
    QCoreApplication::setApplicationName("test_open_files");
    QSettings().clear();
  }
  void init() { QFile::remove(historyPath()); }

  void reportJoinsHistoryAndViews() {
    MainWindow w(historyPath());
    const QString path = write("gpu-box.json", reportJson(true));
    QVERIFY(open(w, {path}));
    QCOMPARE(w.history()->size(), 1);
    const RunEntry& e = w.history()->entries().front();
    QCOMPARE(e.title, QStringLiteral("gpu-box.json"));
    QCOMPARE(e.results.size(), 5);
    QCOMPARE(e.workload.value("n").toInt(), 48);
    QCOMPARE(w.findChild<QTabWidget*>("views")->currentIndex(), int(MainWindow::View::Strategies));
    QVERIFY(w.memoryView()->hasTimeline());
    QAbstractItemModelTester tester(w.memoryView()->model(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(w.memoryView()->model()->rowCount() > 10);
    QVERIFY(w.memoryView()->model()->peakAllocatedBytes() > 0);
    QVERIFY(!errorBox(w));
    QCOMPARE(QFileInfo(w.recentFiles().value(0)).fileName(), QStringLiteral("gpu-box.json"));
  }

  void reportWithoutTimelineShowsItsSummary() {
    MainWindow w(historyPath());
    QVERIFY(open(w, {write("r.json", reportJson(false))}));
    QCOMPARE(w.history()->size(), 1);
    QVERIFY(!w.memoryView()->hasTimeline());
    const QString summary = w.memoryView()->summaryText();
    QVERIFY2(summary.contains("strategy3") && summary.contains("saved as mat2"),
             qPrintable(summary));
  }

  void damagedFileKeepsWhatIsOpen_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("problem");
    const QByteArray good = reportJson(false);
    QTest::newRow("truncated") << good.left(good.size() / 2) << "the file ends early";
    QTest::newRow("empty") << QByteArray() << "the file is empty";
    QTest::newRow("negative size")
        << QByteArray(good).replace("\"max_mem_bytes\": ", "\"max_mem_bytes\": -")
        << "runs[0].max_mem_bytes is -";
    QTest::newRow("newer version") << QByteArray(good).replace("\"version\": 1", "\"version\": 2")
                                   << "the file is a report of version 2";
    QTest::newRow("bad pickle") << QByteArray("\x80\x04K\x01.", 5)
                                << "not a PyTorch memory snapshot";
  }
  void damagedFileKeepsWhatIsOpen() {
    QFETCH(QByteArray, bytes);
    QFETCH(QString, problem);
    MainWindow w(historyPath());
    QVERIFY(open(w, {write("good.json", reportJson(true))}));
    const int rows = w.memoryView()->model()->rowCount();
    QVERIFY(open(w, {write("bad.json", bytes)}));
    QMessageBox* box = errorBox(w);
    QVERIFY(box);
    QVERIFY2(box->text().startsWith("'bad.json': " + problem), qPrintable(box->text()));
    QVERIFY(!box->text().contains(dir_.path()));  // the file's name, never its folder
    QCOMPARE(w.history()->size(), 1);
    QCOMPARE(w.memoryView()->model()->rowCount(), rows);
    QCOMPARE(QFileInfo(w.recentFiles().value(0)).fileName(), QStringLiteral("good.json"));
  }

  void snapshotOpensInMemoryView() {
    MainWindow w(historyPath());
    QVERIFY(open(w, {MATMULVIZ_SNAPSHOT_DIR "/snapshot_2_1_p4.pickle"}));
    QVERIFY(!errorBox(w));
    QCOMPARE(w.findChild<QTabWidget*>("views")->currentIndex(), int(MainWindow::View::Memory));
    QCOMPARE(w.memoryView()->model()->strategy(), QStringLiteral("cuda:0"));
    QAbstractItemModelTester tester(w.memoryView()->model(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(w.memoryView()->model()->peakAllocatedBytes(), 20 * (1 << 20) + 1536);
    QCOMPARE(w.history()->size(), 0);  // a snapshot is no strategies run
  }

  void pythonRunOpensInMemoryView() {
    MainWindow w(historyPath());
    QVERIFY(open(w, {MATMULVIZ_REPORT_DIR "/python_small_run.json"}));
    QVERIFY(!errorBox(w));
    QCOMPARE(w.findChild<QTabWidget*>("views")->currentIndex(), int(MainWindow::View::Memory));
    QCOMPARE(w.memoryView()->model()->strategy(), QStringLiteral("python_small_run.py"));
    QAbstractItemModelTester tester(w.memoryView()->model(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(w.memoryView()->model()->rowCount(), 11);
    QCOMPARE(w.memoryView()->model()->peakAllocatedBytes(), 2560);
    QCOMPARE(w.history()->size(), 0);  // a Python run is no strategies run
  }

  // A snapshot of 400 000 events (written by the fixtures' script) is parsed on the worker
  // thread: the window's event loop keeps running (a 10 ms timer keeps firing) and the progress
  // bar gets fractions.
  void largeSnapshotKeepsTheWindowResponsive() {
    const QString path = dir_.filePath("large.pickle");
    QProcess py;
    py.start("/usr/bin/python3", {MATMULVIZ_SNAPSHOT_SCRIPT, "--large", "400000", path});
    if (!py.waitForStarted()) QSKIP("no /usr/bin/python3 to write the large snapshot");
    QVERIFY(py.waitForFinished(120'000) && py.exitCode() == 0);
    MainWindow w(historyPath());
    QSignalSpy progress(w.fileLoader(), &FileLoader::progress);
    int ticks = 0;
    QTimer timer;
    QObject::connect(&timer, &QTimer::timeout, [&] { ++ticks; });
    timer.start(10);
    QElapsedTimer clock;
    clock.start();
    w.openFiles({path});
    QVERIFY(QTest::qWaitFor([&] { return !w.fileLoader()->isLoading(); }, kLoadMs));
    const qint64 ms = clock.elapsed();
    QVERIFY(!errorBox(w));
    QVERIFY2(ticks >= ms / 10 / 4, qPrintable(QString("%1 ticks in %2 ms").arg(ticks).arg(ms)));
    QVERIFY(!progress.isEmpty());
    QCOMPARE(w.memoryView()->model()->strategy(), QStringLiteral("cuda:0"));
    QVERIFY(w.memoryView()->model()->rowCount() > 200'000);
  }

  void presetFillsThePanelAndFilesOpenInOrder() {
    MainWindow w(historyPath());
    const QString preset = write("tiny.json", "{\"workload\": {\"n\": 12, \"m\": 3}}");
    const QString report = write("r.json", reportJson(false));
    QVERIFY(open(w, {report, preset}));
    QCOMPARE(w.scenarioPanel()->scenario().config.workload.n, 12);
    QCOMPARE(w.history()->size(), 1);
    QCOMPARE(QFileInfo(w.recentFiles().value(0)).fileName(), QStringLiteral("tiny.json"));
    QCOMPARE(QFileInfo(w.recentFiles().value(1)).fileName(), QStringLiteral("r.json"));
  }

  void dropAndOpenRecent() {
    QSettings().clear();
    MainWindow w(historyPath());
    const QString path = write("dropped.json", reportJson(false));
    auto* mime = new QMimeData;
    mime->setUrls({QUrl::fromLocalFile(path)});
    QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(&w, &enter);
    QVERIFY(enter.isAccepted());
    QDropEvent drop(QPointF(10, 10), Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(&w, &drop);
    QVERIFY(w.fileLoader()->wait(kLoadMs));
    QCOMPARE(w.history()->size(), 1);
    // File > Open Recent lists it by name and opens it again.
    auto* recent = w.findChild<QMenu*>("recentFilesMenu");
    QVERIFY(recent);
    QAction* first = recent->actions().value(0);
    QVERIFY(first && first->text().endsWith("dropped.json"));
    QVERIFY(!first->text().contains(dir_.path()));
    first->trigger();
    QVERIFY(w.fileLoader()->wait(kLoadMs));
    QCOMPARE(w.history()->size(), 2);
    delete mime;
  }
};

QTEST_MAIN(TestOpenFiles)
#include "test_open_files.moc"
