// matmulviz-cli compare, end to end: two reports that `strategies --json --timeline` wrote
// (requires_grad none and a,c of the small preset) compared as text, as JSON (kind "compare"),
// and as charts with --out; bad input (a missing, damaged or incomparable file, a bad option)
// exits 2 with a message naming the file or the option.

#include "tests/common/cli_process.h"

#include <QtTest/QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

namespace {

using matmulviz::testing::CliResult;

CliResult runCli(const QStringList& args) {
  return matmulviz::testing::runCliProcess(QStringLiteral(MATMULVIZ_CLI_PATH), args,
                                           {120'000, {}, true});
}

}  // namespace

class TestCliCompare : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QString a_, b_, plain_;

 private slots:
  void initTestCase() {
    a_ = dir_.filePath("a.json"), b_ = dir_.filePath("b.json"), plain_ = dir_.filePath("p.json");
    const struct {
      QString path, grad;
      bool timeline;
    } runs[] = {{a_, "none", true}, {b_, "a,c", true}, {plain_, "none", false}};
    for (const auto& r : runs) {
      QStringList args{"strategies",   "--preset",         "small",           "--repeats", "1",
                       "--strategies", "strategy3,direct", "--requires-grad", r.grad,      "--json",
                       r.path};
      if (r.timeline) args << "--timeline" << dir_.filePath("trace.json");
      const CliResult res = runCli(args);
      QVERIFY2(res.finished && res.exitCode == 0, qPrintable(res.describe()));
    }
  }
  void text() {
    const CliResult r = runCli({"compare", a_, b_});
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const QString out = QString::fromUtf8(r.out);
    QVERIFY2(out.startsWith("A: a.json\nB: b.json\nrequires_grad: none -> a,c\n"), qPrintable(out));
    QVERIFY(out.contains("memory timeline: strategy3"));
    QVERIFY(out.contains("memory timeline: direct"));
    // direct with a requiring grad saves c[q] for bmm's backward: it grows at the peak.
    QVERIFY2(out.contains(QRegularExpression("saved for backward +0 B +1\\.46 MiB +\\+1\\.46 MiB")),
             qPrintable(out));
  }
  void json() {
    const QString path = dir_.filePath("cmp.json");
    const CliResult r = runCli({"compare", a_, b_, "--json", path});
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonObject doc = QJsonDocument::fromJson(f.readAll()).object();
    QCOMPARE(doc["format"].toString(), "matmulviz-report");
    QCOMPARE(doc["kind"].toString(), "compare");
    QCOMPARE(doc["a"].toString(), "a.json");
    const QJsonArray strategies = doc["strategies"].toArray();
    QCOMPARE(strategies.size(), 2);
    QCOMPARE(strategies[1].toObject()["strategy"].toString(), "direct");
    const QJsonObject maxMem = strategies[1].toObject()["max_mem_bytes"].toObject();
    QCOMPARE(maxMem["difference"].toInteger(), maxMem["b"].toInteger() - maxMem["a"].toInteger());
    const QJsonArray timelines = doc["timelines"].toArray();
    QCOMPARE(timelines.size(), 2);
    const QJsonObject peak = timelines[1].toObject()["peak_allocated"].toObject();
    QVERIFY(peak["difference_bytes"].toInteger() > 0);
    // --json - writes only the JSON on stdout.
    const CliResult stdoutJson = runCli({"compare", a_, b_, "--json", "-"});
    QVERIFY(stdoutJson.exitCode == 0);
    QCOMPARE(QJsonDocument::fromJson(stdoutJson.out).object()["kind"].toString(), "compare");
  }
  void charts() {
    const QString out = dir_.filePath("charts/deeper");
    const CliResult r = runCli({"compare", a_, b_, "--out", out, "--formats", "png,csv"});
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    for (const char* name : {"compare-strategies-maxmem.png", "compare-strategies-curmem.csv",
                             "compare-strategies-time.png", "compare-memory-direct.png",
                             "compare-memory-direct.csv", "compare-difference-strategy3.png"})
      QVERIFY2(QFileInfo(out + "/" + name).size() > 100, name);
    QVERIFY(!QFileInfo::exists(out + "/compare-memory-direct.svg"));
  }
  void withoutATimeline() {
    const CliResult r = runCli({"compare", a_, plain_});
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    QVERIFY2(r.out.contains("note: 'p.json' has no memory timeline: rerun it with "
                            "`matmulviz-cli strategies ... --json p.json --timeline"),
             r.out.constData());
    QVERIFY(!r.out.contains("memory timeline: direct"));
  }
  void badInput_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    QTest::newRow("missing file") << QStringList{"A", "missing.json"} << "missing.json";
    QTest::newRow("damaged report") << QStringList{"A", "damaged"} << "'damaged.json':";
    QTest::newRow("nothing to compare")
        << QStringList{"P", MATMULVIZ_REPORT_DIR "/python_small_run.json"}
        << "nothing to compare between 'p.json' and 'python_small_run.json'";
    QTest::newRow("one file") << QStringList{"A"} << "files: At least 2 required";
    QTest::newRow("bad format") << QStringList{"A", "B", "--out", "o", "--formats", "gif"}
                                << "--formats: 'gif' is not a format";
    QTest::newRow("formats without out")
        << QStringList{"A", "B", "--formats", "png"} << "--formats: needs --out";
  }
  void badInput() {
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    QFile damaged(dir_.filePath("damaged.json"));
    QVERIFY(damaged.open(QIODevice::WriteOnly));
    damaged.write("{\"format\": \"matmulviz-report\", \"version\": 1, \"kind\": \"strat");
    damaged.close();
    for (QString& a : args) {
      if (a == "A") a = a_;
      if (a == "B") a = b_;
      if (a == "P") a = plain_;
      if (a == "damaged") a = damaged.fileName();
      if (a == "missing.json" || a == "o") a = dir_.filePath(a);
    }
    const CliResult r = runCli(QStringList{"compare"} + args);
    QVERIFY2(r.finished && r.exitCode == 2, qPrintable(r.describe()));
    QVERIFY2(QString::fromUtf8(r.err).contains(message), r.err.constData());
    QVERIFY(r.out.isEmpty());
  }
};

QTEST_GUILESS_MAIN(TestCliCompare)
#include "test_cli_compare.moc"
