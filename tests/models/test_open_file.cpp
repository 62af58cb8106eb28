// ui/models/open_file.h: the kind of a file from its first bytes, and loadFile for each kind:
// a report written by the CLI's writer, a PyTorch snapshot fixture, a preset; every bad file is
// refused with a message naming the file by its name (never its folder) and the problem.
#include "core/report/report_json.h"
#include "core/strategies/runner.h"
#include "ui/models/open_file.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace matmulviz;
using namespace matmulviz::ui;

namespace {

StrategiesReport smallReport() {
  RunConfig c;
  c.workload = {32, 4, 1, 4, 2, 8, DType::Float32};
  c.strategies = {"strategy3", "direct"};
  c.repeats = 1;
  c.recordTimeline = true;
  StrategyRunner runner(c, makeRandomInputs(c.workload, 1));
  return runner.run();
}

}  // namespace

class TestOpenFile : public QObject {
  Q_OBJECT
 private slots:
  void init() { QVERIFY(dir_.isValid()); }
  void kinds();
  void report();
  void snapshot();
  void pythonRun();
  void preset();
  void badFiles_data();
  void badFiles();

 private:
  QString write(const QString& name, const QByteArray& bytes) {
    const QString path = dir_.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) return {};
    f.write(bytes);
    return path;
  }
  QTemporaryDir dir_;
};

void TestOpenFile::kinds() {
  QCOMPARE(detectFileKind("\x80\x04\x95"), FileKind::Snapshot);
  QCOMPARE(detectFileKind("  {\"format\": \"matmulviz-report\", \"version\": 1"), FileKind::Report);
  QCOMPARE(detectFileKind("{\"workload\": {\"n\": 4}}"), FileKind::Preset);
  QCOMPARE(detectFileKind("n,m\n1,2\n"), FileKind::Unknown);
  QCOMPARE(detectFileKind(""), FileKind::Unknown);
}

void TestOpenFile::report() {
  const StrategiesReport written = smallReport();
  const QString path =
      write("r.json", QByteArray::fromStdString(toJson(written, TimelineInJson::Include).dump(2)));
  const OpenedFile f = loadFile(path);
  QCOMPARE(f.kind, FileKind::Report);
  QCOMPARE(f.fileName, QStringLiteral("r.json"));
  QVERIFY(f.report);
  QCOMPARE(f.report->runs.size(), size_t(2));
  QCOMPARE(f.report->runs[1].strategy, std::string("direct"));
  QCOMPARE(f.report->runs[1].peak.allocatedBytes, written.runs[1].peak.allocatedBytes);
  QCOMPARE(f.report->runs[0].timeline.events.size(), written.runs[0].timeline.events.size());
  QVERIFY(f.ignoredKeys.isEmpty());
  QVERIFY(!f.timelines);
}

void TestOpenFile::snapshot() {
  double last = -1;
  const OpenedFile f =
      loadFile(MATMULVIZ_SNAPSHOT_DIR "/snapshot_2_6_p5.pickle", [&](double x) { last = x; });
  QCOMPARE(f.kind, FileKind::Snapshot);
  QVERIFY(f.timelines);
  QCOMPARE(f.timelines->size(), size_t(1));  // device 1 has a trace list, but empty
  QCOMPARE(f.timelines->front().name, QStringLiteral("cuda:0"));
  QVERIFY(!f.timelines->front().timeline.events.empty());
  QCOMPARE(f.eventCount, size_t(12));
  QCOMPARE(last, 1.0);
}

void TestOpenFile::pythonRun() {
  const OpenedFile f = loadFile(MATMULVIZ_REPORT_DIR "/python_small_run.json");
  QCOMPARE(f.kind, FileKind::Report);
  QVERIFY(!f.report);
  QVERIFY(f.timelines);
  QCOMPARE(f.timelines->size(), size_t(1));
  QCOMPARE(f.timelines->front().name, QStringLiteral("python_small_run.py"));
  QCOMPARE(f.eventCount, size_t(11));
  QVERIFY(f.note.contains("line of the script"));
}

void TestOpenFile::preset() {
  const OpenedFile f = loadFile(write("p.json", "{\"workload\": {\"n\": 8}}"));
  QCOMPARE(f.kind, FileKind::Preset);
  QVERIFY(!f.report && !f.timelines);
}

void TestOpenFile::badFiles_data() {
  QTest::addColumn<QString>("name");
  QTest::addColumn<QByteArray>("bytes");
  QTest::addColumn<QString>("problem");
  const QByteArray report = QByteArray::fromStdString(toJson(smallReport()).dump());
  QFile pickle(MATMULVIZ_SNAPSHOT_DIR "/snapshot_2_6_p4.pickle");
  QVERIFY(pickle.open(QIODevice::ReadOnly));
  const QByteArray snapshot = pickle.readAll();
  QTest::newRow("empty") << "e.json" << QByteArray() << "'e.json': the file is empty";
  QTest::newRow("csv") << "t.csv" << QByteArray("a,b\n") << "'t.csv': not a matmulviz report";
  QTest::newRow("truncated report")
      << "r.json" << report.left(report.size() / 3) << "'r.json': the file ends early";
  QTest::newRow("newer report") << "v.json"
                                << QByteArray(report).replace("\"version\":1", "\"version\":7")
                                << "'v.json': the file is a report of version 7, newer";
  QTest::newRow("negative size") << "n.json"
                                 << QByteArray(report).replace("\"cur_mem_bytes\":",
                                                               "\"cur_mem_bytes\":-")
                                 << "'n.json': runs[0].cur_mem_bytes is -";
  QTest::newRow("truncated snapshot")
      << "s.pickle" << snapshot.left(snapshot.size() / 2) << "'s.pickle': ";
  QTest::newRow("pickle of a list") << "l.pickle" << QByteArray("\x80\x04]\x94.", 5)
                                    << "'l.pickle': not a PyTorch memory snapshot";
}

void TestOpenFile::badFiles() {
  QFETCH(QString, name);
  QFETCH(QByteArray, bytes);
  QFETCH(QString, problem);
  const QString path = write(name, bytes);
  try {
    loadFile(path);
    QFAIL("the file was opened");
  } catch (const std::runtime_error& e) {
    const QString what = QString::fromUtf8(e.what());
    QVERIFY2(what.startsWith(problem), qPrintable(what));
    QVERIFY2(!what.contains(dir_.path()), qPrintable(what));  // the name, not the folder
  }
  try {
    loadFile(dir_.filePath("missing.json"));
    QFAIL("a missing file was opened");
  } catch (const std::runtime_error& e) {
    QCOMPARE(QString::fromUtf8(e.what()),
             QStringLiteral("'missing.json': the file cannot be opened (not found)"));
  }
}

QTEST_GUILESS_MAIN(TestOpenFile)
#include "test_open_file.moc"
