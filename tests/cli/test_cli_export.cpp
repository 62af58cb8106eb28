// matmulviz-cli export, end to end: the built executable runs through QProcess with no display
// (DISPLAY and WAYLAND_DISPLAY removed, QT_QPA_PLATFORM unset: the command picks offscreen) and
// writes non-empty PNG, SVG, PDF, CSV and JSON files; bad input exits 2 naming the argument;
// `export --report FILE` draws a report that `strategies --json` wrote, a Python run's report,
// a PyTorch memory snapshot and a joint graph file, and refuses a bad one.

#include "tests/common/cli_process.h"

#include <QtTest/QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

namespace {

constexpr int kTimeoutMs = 120'000;

using matmulviz::testing::CliResult;

/// Runs matmulviz-cli with `args` and no display.
CliResult runCli(const QStringList& args) {
  return matmulviz::testing::runCliProcess(QStringLiteral(MATMULVIZ_CLI_PATH), args,
                                           {kTimeoutMs, {}, true});
}

}  // namespace

class TestCliExport : public QObject {
  Q_OBJECT
 private slots:
  // examples/peak_lines.py's numbers here are its activations' (no cuBLAS workspace, which
  // PyTorch 2.x adds per thread and the Python runs count by default since issue 24).
  void initTestCase() { qputenv("CUBLAS_WORKSPACE_CONFIG", ":0:0"); }
  void writesEveryFormat_data();
  void writesEveryFormat();
  void metaHasNoHeatmaps();
  void budgetCharts();
  void budgetGraphCharts();
  void badInputExits2_data();
  void badInputExits2();
  void outRefusedBeforeAnyWork_data();
  void outRefusedBeforeAnyWork();
  void outCreatesItsParents();
  void cudaRunsOrSaysWhy();
  void drawsAReport();
  void drawsASnapshot();
  void drawsAPythonRun();
  void summarisesReportsWithoutTimeline();
  void refusesABadReport_data();
  void refusesABadReport();
};

void TestCliExport::writesEveryFormat_data() {
  QTest::addColumn<QString>("formats");
  QTest::addColumn<QStringList>("suffixes");
  QTest::newRow("all") << "png,svg,pdf,csv,json" << QStringList{"png", "svg", "pdf", "csv", "json"};
}

void TestCliExport::writesEveryFormat() {
  QFETCH(QString, formats);
  QFETCH(QStringList, suffixes);
  QTemporaryDir tmp;
  const QString out = tmp.filePath("export");
  const CliResult r = runCli({"export", "--preset", "small", "--repeats", "1", "--strategies",
                              "direct,fused", "--out", out, "--formats", formats});
  QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
  const QStringList listed = QString::fromUtf8(r.out).split('\n', Qt::SkipEmptyParts);
  QVERIFY(!listed.isEmpty());
  QStringList seen;
  for (const QString& f : listed) {
    QVERIFY2(QFileInfo(f).size() > 0, qPrintable(f));
    QVERIFY2(f.startsWith(out), qPrintable(f));
    seen << QFileInfo(f).suffix();
  }
  for (const QString& s : suffixes) QVERIFY2(seen.contains(s), qPrintable(s));
  for (const QString& s : QStringList{"png", "svg", "pdf", "csv", "json"})
    if (!suffixes.contains(s)) QVERIFY2(!seen.contains(s) || s == "json", qPrintable(s));
  // The small preset runs backward with a and c requiring grad: every chart kind is there.
  for (const char* name : {"strategies-time-bars", "strategies-maxmem-bars", "strategies-ranking",
                           "memory-timeline-direct", "heatmap-dA-fused", "heatmap-dC-direct",
                           "budget-graph", "budget-frontier", "budget-timeline"})
    QVERIFY2(QFileInfo(out + "/" + name + ".png").size() > 1000, name);
  QVERIFY(QFileInfo(out + "/table.txt").size() > 0);
  QVERIFY2(!r.err.contains("XDG_RUNTIME_DIR"), r.err.constData());  // no Qt noise headless
  if (suffixes.contains("json")) {
    QFile f(out + "/report.json");
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonObject report = QJsonDocument::fromJson(f.readAll()).object();
    const QJsonArray runs = report.value("runs").toArray();
    QCOMPARE(runs.size(), 2);
    QVERIFY(runs[0].toObject().value("predicted").toObject().value("time_s").toDouble() > 0);
    QFile trace(out + "/timeline.json");
    QVERIFY(trace.open(QIODevice::ReadOnly));
    const QJsonDocument doc = QJsonDocument::fromJson(trace.readAll());
    QVERIFY(doc.isObject() || doc.isArray());
  }
}

void TestCliExport::metaHasNoHeatmaps() {
  QTemporaryDir tmp;
  const CliResult r =
      runCli({"export", "--preset", "small", "--device", "meta", "--requires-grad", "a",
              "--strategies", "direct,fused", "--formats", "png", "--out", tmp.path()});
  QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
  QVERIFY(QFileInfo(tmp.filePath("memory-timeline-direct.png")).size() > 0);
  QVERIFY(!QFileInfo::exists(tmp.filePath("memory-timeline-strategy1.png")));
  QVERIFY(!QFileInfo::exists(tmp.filePath("heatmap-dA-direct.png")));   // meta: no values
  QVERIFY(!QFileInfo::exists(tmp.filePath("strategies-ranking.png")));  // nor measured times
  // Only the formats asked for, and the table.
  for (const QFileInfo& f : QDir(tmp.path()).entryInfoList(QDir::Files))
    QVERIFY2(f.suffix() == "png" || f.fileName() == "table.txt", qPrintable(f.fileName()));
}

// The Budget view's charts of another example at another budget; none with "none".
void TestCliExport::budgetCharts() {
  QTemporaryDir tmp;
  const QString out = tmp.filePath("t");
  CliResult r = runCli({"export", "--preset", "small", "--device", "meta", "--strategies", "direct",
                        "--formats", "csv", "--budget-example", "transformer-2", "--budget", "0.5",
                        "--out", out});
  QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
  QFile frontier(out + "/budget-frontier.csv");
  QVERIFY(frontier.open(QIODevice::ReadOnly));
  const QStringList rows = QString::fromUtf8(frontier.readAll()).split('\n', Qt::SkipEmptyParts);
  QVERIFY2(rows.size() >= 3, "a header and at least two distinct plans");
  int current = 0;
  for (const QString& row : rows.mid(1)) current += row.endsWith(",1");
  QCOMPARE(current, 1);
  QFile graph(out + "/budget-graph.csv");
  QVERIFY(graph.open(QIODevice::ReadOnly));
  QVERIFY(graph.readAll().contains("_scaled_dot_product_efficient_attention"));
  QVERIFY(QFileInfo(out + "/budget-timeline.csv").size() > 0);
  const QString none = tmp.filePath("none");
  r = runCli({"export", "--preset", "small", "--device", "meta", "--strategies", "direct",
              "--formats", "png", "--budget-example", "none", "--out", none});
  QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
  QVERIFY(!QFileInfo::exists(none + "/budget-graph.png"));
}

// A traced function's graph file (budget --graph-out --no-sweep) drawn by --budget-graph; a
// damaged one is refused before the run, naming the file and the key.
void TestCliExport::budgetGraphCharts() {
#ifndef MATMULVIZ_HAVE_PYTHON
  QSKIP("this build has no Python module (the sanitizer build): nothing can trace a script");
#endif
  QTemporaryDir tmp;
  const QString graph = tmp.filePath("chain-graph.json");
  CliResult r = runCli({"budget", QStringLiteral(MATMULVIZ_SOURCE_DIR "/examples/budget_chain.py"),
                        "--function", "f", "--graph-out", graph, "--no-sweep"});
  QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
  const QString out = tmp.filePath("t");
  r = runCli({"export", "--preset", "small", "--device", "meta", "--strategies", "direct",
              "--formats", "csv", "--budget-graph", graph, "--budget", "0.3", "--out", out});
  QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
  QFile nodes(out + "/budget-graph.csv");
  QVERIFY(nodes.open(QIODevice::ReadOnly));
  const QString csv = QString::fromUtf8(nodes.readAll());
  // At 0.3 the traced chain saves mm, mm_1, mm_2 and recomputes mm_3 and mm_4 (as budget says).
  QVERIFY2(csv.contains("\nmm_2,mm,saved for the backward,1048576,268435456"), qPrintable(csv));
  QVERIFY2(csv.contains("\nmm_4,mm,recomputed in the backward,1048576,268435456"), qPrintable(csv));
  QFile frontier(out + "/budget-frontier.csv");
  QVERIFY(frontier.open(QIODevice::ReadOnly));
  QCOMPARE(QString::fromUtf8(frontier.readAll()).split('\n', Qt::SkipEmptyParts).size(), 8);
  // --budget-script traces it itself: the same charts.
  const QString traced = tmp.filePath("traced");
  r = runCli({"export", "--preset", "small", "--device", "meta", "--strategies", "direct",
              "--formats", "csv", "--budget-script",
              QStringLiteral(MATMULVIZ_SOURCE_DIR "/examples/budget_chain.py"), "--budget", "0.3",
              "--out", traced});
  QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
  QFile again(traced + "/budget-graph.csv");
  QVERIFY(again.open(QIODevice::ReadOnly));
  QCOMPARE(QString::fromUtf8(again.readAll()), csv);
  // --report with the graph file: the same charts, no strategies run.
  const QString opened = tmp.filePath("opened");
  r = runCli({"export", "--report", graph, "--formats", "csv", "--budget", "0.3", "--out", opened});
  QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
  QFile fromReport(opened + "/budget-graph.csv");
  QVERIFY(fromReport.open(QIODevice::ReadOnly));
  QCOMPARE(QString::fromUtf8(fromReport.readAll()), csv);
  QVERIFY(!QFileInfo::exists(opened + "/strategies-time-bars.csv"));
  QFile damaged(graph);
  QVERIFY(damaged.open(QIODevice::ReadWrite));
  const QByteArray text = damaged.readAll().replace("\"bytes\": 1048576", "\"bytes\": -1");
  damaged.resize(0);
  damaged.write(text);
  damaged.close();
  r = runCli({"export", "--preset", "small", "--budget-graph", graph, "--out", out});
  QVERIFY2(r.finished && r.exitCode == 2, qPrintable(r.describe()));
  QVERIFY2(
      QString::fromUtf8(r.err).contains("--budget-graph: 'chain-graph.json': nodes[0].bytes is -1"),
      qPrintable(r.err));
}

void TestCliExport::badInputExits2_data() {
  QTest::addColumn<QStringList>("args");
  QTest::addColumn<QString>("message");
  const QStringList small{"--preset", "small"};
  QTest::newRow("unknown format") << small + QStringList{"--formats", "png,bmp"}
                                  << "--formats: 'bmp'";
  QTest::newRow("unknown device") << small + QStringList{"--device", "tpu"}
                                  << "--device: unknown device 'tpu'";
  QTest::newRow("unknown preset") << QStringList{"--preset", "nope"}
                                  << "--preset: unknown preset 'nope'";
  QTest::newRow("unknown strategy")
      << small + QStringList{"--strategies", "fused,slow"} << "--strategies";
  QTest::newRow("unknown model") << small + QStringList{"--model", "v100"} << "--model";
  QTest::newRow("bad requires_grad")
      << small + QStringList{"--requires-grad", "b"} << "--requires-grad";
  QTest::newRow("no --out") << small << "--out is required";
  // The scenario options strategies has, with its words (one declaration: scenario_options).
  QTest::newRow("n zero") << small + QStringList{"--n", "0"} << "--n: ";
  QTest::newRow("float64") << small + QStringList{"--dtype", "float64"}
                           << "--dtype: 'float64' is not allowed";
  QTest::newRow("device memory 0") << small + QStringList{"--device-memory", "0"}
                                   << "--device-memory: must be more than 0 bytes";
  QTest::newRow("unknown budget example")
      << small + QStringList{"--budget-example", "resnet"} << "--budget-example: unknown example";
  QTest::newRow("budget above 1") << small + QStringList{"--budget", "1.5"}
                                  << "--budget: the valid range is 0 <= budget <= 1";
}

void TestCliExport::badInputExits2() {
  QFETCH(QStringList, args);
  QFETCH(QString, message);
  QTemporaryDir tmp;
  const bool noOut = QString(QTest::currentDataTag()) == "no --out";
  const QStringList out = noOut ? QStringList{} : QStringList{"--out", tmp.path()};
  const CliResult r = runCli(QStringList{"export"} + out + args);
  QVERIFY2(r.finished && r.exitCode == 2, qPrintable(r.describe()));
  QVERIFY2(QString::fromUtf8(r.err).contains(message), qPrintable(r.describe()));
  QVERIFY(QDir(tmp.path()).isEmpty());  // nothing written
}

/// An --out the OS refuses, or "": exit 2 naming --out and the reason, before the run (no
/// progress line) and with nothing written, the working directory included.
void TestCliExport::outRefusedBeforeAnyWork_data() {
  QTest::addColumn<QString>("out");
  QTest::addColumn<QString>("message");
  QTest::newRow("empty") << ""
                         << "--out: '' is not a directory";
  QTest::newRow("in /proc") << "/proc/matmulviz-x"
                            << "--out: cannot create '/proc/matmulviz-x': ";
  QTest::newRow("under /proc/1") << "/proc/1/x/y"
                                 << "--out: cannot create '/proc/1/x/y': ";
  QTest::newRow("a file") << "@CWD@/file.txt"
                          << "exists and is not a directory";
}

void TestCliExport::outRefusedBeforeAnyWork() {
  QFETCH(QString, out);
  QFETCH(QString, message);
  QTemporaryDir cwd;
  QFile file(cwd.filePath("file.txt"));
  QVERIFY(file.open(QIODevice::WriteOnly));
  file.close();
  out.replace(QStringLiteral("@CWD@"), cwd.path());
  const CliResult r = matmulviz::testing::runCliProcess(
      QStringLiteral(MATMULVIZ_CLI_PATH),
      {"export", "--preset", "small", "--formats", "csv", "--out", out},
      {kTimeoutMs, cwd.path(), true});
  QVERIFY2(r.finished && r.exitCode == 2, qPrintable(r.describe()));
  QVERIFY2(QString::fromUtf8(r.err).contains(message), qPrintable(r.describe()));
  QVERIFY2(!r.err.contains("[matmulviz]"), qPrintable(r.describe()));  // nothing ran
  QCOMPARE(QDir(cwd.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot),
           QStringList{"file.txt"});
}

/// --out a/b/c creates all three levels, as mkdir -p.
void TestCliExport::outCreatesItsParents() {
  QTemporaryDir tmp;
  const QString out = tmp.filePath("a/b/c");
  const CliResult r = runCli({"export", "--preset", "small", "--repeats", "1", "--strategies",
                              "fused", "--formats", "csv", "--out", out});
  QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
  QVERIFY(QFileInfo(out + "/strategies.csv").size() > 0);
  QVERIFY(QFileInfo(out + "/table.txt").size() > 0);
}

/// --device cuda exports from a GPU run, or (no GPU here) exits 1 saying why before any work
/// (no progress line: no inputs made, no float64 reference computed), writing nothing.
void TestCliExport::cudaRunsOrSaysWhy() {
  QTemporaryDir tmp;
  const CliResult r = runCli({"export", "--out", tmp.path(), "--preset", "small", "--device",
                              "cuda", "--formats", "csv", "--repeats", "1"});
  if (matmulviz::testing::cudaAnswers(QStringLiteral(MATMULVIZ_CLI_PATH))) {
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    return;
  }
  QVERIFY2(r.finished && !r.crashed && r.exitCode == 1, qPrintable(r.describe()));
  QVERIFY2(QString::fromUtf8(r.err).contains("CUDA is not available"), qPrintable(r.describe()));
  QVERIFY2(!r.err.contains("[matmulviz]"), qPrintable(r.describe()));
  QVERIFY(QDir(tmp.path()).isEmpty());
}

void TestCliExport::drawsAReport() {
  QTemporaryDir tmp;
  const QString report = tmp.filePath("gpu-box.json"), out = tmp.filePath("charts");
  const CliResult made =
      runCli({"strategies", "--preset", "small", "--repeats", "1", "--strategies",
              "strategy3,direct", "--json", report, "--timeline", tmp.filePath("trace.json")});
  QVERIFY2(made.finished && made.exitCode == 0, qPrintable(made.describe()));
  const CliResult r = runCli({"export", "--report", report, "--out", out, "--formats", "png,json"});
  QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
  // The same charts as for a run, the memory timelines from the report's recorded timeline.
  for (const char* name : {"strategies-time-bars", "strategies-maxmem-bars", "strategies-ranking",
                           "memory-timeline-strategy3", "memory-timeline-direct"})
    QVERIFY2(QFileInfo(out + "/" + name + ".png").size() > 1000, name);
  QFile f(out + "/report.json");
  QVERIFY(f.open(QIODevice::ReadOnly));
  const QJsonArray runs = QJsonDocument::fromJson(f.readAll()).object().value("runs").toArray();
  QCOMPARE(runs.size(), 2);
  QCOMPARE(runs[1].toObject().value("strategy").toString(), QStringLiteral("direct"));
  QVERIFY(!runs[1].toObject().contains("timeline"));  // export's report.json stays small
  QFile h(out + "/history.json");
  QVERIFY(h.open(QIODevice::ReadOnly));
  QVERIFY(h.readAll().contains("\"gpu-box.json\""));  // titled by the report's file name
}

void TestCliExport::drawsASnapshot() {
  QTemporaryDir tmp;
  const QString out = tmp.filePath("charts");
  const CliResult r = runCli(
      {"export", "--report",
       QStringLiteral(MATMULVIZ_SOURCE_DIR "/tests/reference/snapshots/snapshot_2_6_p4.pickle"),
       "--out", out, "--formats", "png,csv"});
  QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
  QVERIFY(QFileInfo(out + "/memory-timeline-cuda-0.png").size() > 1000);  // "cuda:0", as a name
  // Its allocations stacked as memory_viz draws them, as the Memory view shows a snapshot.
  QVERIFY(QFileInfo(out + "/memory-allocations-cuda-0.png").size() > 1000);
  QFile csv(out + "/memory-timeline-cuda-0.csv");
  QVERIFY(csv.open(QIODevice::ReadOnly));
  QCOMPARE(QString::fromUtf8(csv.readAll()).count('\n'), 13);  // a header and its 12 events
  QFile summary(out + "/summary.txt");
  QVERIFY(summary.open(QIODevice::ReadOnly));
  const QString text = QString::fromUtf8(summary.readAll());
  QVERIFY2(text.contains("cuda:0: 12 events; peak allocated 20 MiB at event 7 (op forward, block "
                         "linear.py:116); peak reserved 44 MiB"),
           qPrintable(text));
  QVERIFY(!QFileInfo::exists(out + "/strategies-time-bars.png"));
}

void TestCliExport::drawsAPythonRun() {
#ifndef MATMULVIZ_HAVE_PYTHON
  QSKIP("this build has no Python module (the sanitizer build): no script can run");
#endif
  QTemporaryDir tmp;
  const QString report = tmp.filePath("run.json"), out = tmp.filePath("charts");
  CliResult r = runCli(
      {"run", QStringLiteral(MATMULVIZ_SOURCE_DIR "/examples/peak_lines.py"), "--report", report});
  QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
  r = runCli({"export", "--report", report, "--out", out, "--formats", "svg"});
  QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
  QVERIFY(QFileInfo(out + "/memory-timeline-peak_lines.py.svg").size() > 1000);
  QFile summary(out + "/summary.txt");
  QVERIFY(summary.open(QIODevice::ReadOnly));
  const QString text = QString::fromUtf8(summary.readAll());
  QVERIFY2(text.contains("peak_lines.py: 72 events; peak allocated 72 MiB at event 68"),
           qPrintable(text));
  // The script itself is not a report: refused, naming it and what to run.
  r = runCli({"export", "--report", QStringLiteral(MATMULVIZ_SOURCE_DIR "/examples/peak_lines.py"),
              "--out", tmp.filePath("script")});
  QVERIFY2(r.finished && r.exitCode == 2, qPrintable(r.describe()));
  QVERIFY2(QString::fromUtf8(r.err).contains("'peak_lines.py': a Python script or a preset, not a "
                                             "report (run the script first"),
           r.err.constData());
}

void TestCliExport::summarisesReportsWithoutTimeline() {
  QTemporaryDir tmp;
  const QString einsum = tmp.filePath("e.json"), budget = tmp.filePath("b.json");
  CliResult r = runCli({"einsum", "ij,jk->ik", "--shapes", "2x3,3x4", "--json", einsum});
  QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
  r = runCli({"export", "--report", einsum, "--out", tmp.filePath("e")});
  QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
  QFile summary(tmp.filePath("e/summary.txt"));
  QVERIFY(summary.open(QIODevice::ReadOnly));
  const QString text = QString::fromUtf8(summary.readAll());
  QVERIFY2(text.contains("einsum('ij,jk->ik') of [2, 3], [3, 4] -> [2, 4], float32 on cpu: "),
           qPrintable(text));
  // A budget report whose script is gone: refused, saying what the charts need.
  QFile b(budget);
  QVERIFY(b.open(QIODevice::WriteOnly));
  b.write(R"({"format": "matmulviz-report", "version": 1, "kind": "budget", "script":
    "/nowhere/chain.py", "function": "f", "solver": "dp", "budgets": [0.5],
    "eager": {"activation_bytes": 4}})");
  b.close();
  r = runCli({"export", "--report", budget, "--out", tmp.filePath("b")});
  QVERIFY2(r.finished && r.exitCode == 2, qPrintable(r.describe()));
  QVERIFY2(QString::fromUtf8(r.err).contains("'b.json': its script /nowhere/chain.py is not here"),
           r.err.constData());
}

void TestCliExport::refusesABadReport_data() {
  QTest::addColumn<QByteArray>("bytes");
  QTest::addColumn<QStringList>("extra");
  QTest::addColumn<QString>("message");
  QTest::newRow("empty") << QByteArray() << QStringList{}
                         << "--report: 'r.json': the file is empty";
  QTest::newRow("newer") << QByteArray("{\"format\": \"matmulviz-report\", \"version\": 4}")
                         << QStringList{} << "'r.json': the file is a report of version 4, newer";
  QTest::newRow("unknown kind")
      << QByteArray("{\"format\": \"matmulviz-report\", \"version\": 1, \"kind\": \"ladder\"}")
      << QStringList{} << "'r.json': the file is a report of kind 'ladder'";
  QTest::newRow("compare kind")
      << QByteArray("{\"format\": \"matmulviz-report\", \"version\": 1, \"kind\": \"compare\"}")
      << QStringList{} << "'r.json': a comparison of two reports (matmulviz-cli compare --json)";
  QTest::newRow("einsum without its equation")
      << QByteArray("{\"format\": \"matmulviz-report\", \"version\": 1, \"kind\": \"einsum\"}")
      << QStringList{} << "'r.json': equation is missing";
  QTest::newRow("a run option") << QByteArray("{}") << QStringList{"--preset", "small"}
                                << "--preset is not allowed with --report";
}

void TestCliExport::refusesABadReport() {
  QFETCH(QByteArray, bytes);
  QFETCH(QStringList, extra);
  QFETCH(QString, message);
  QTemporaryDir tmp;
  QFile f(tmp.filePath("r.json"));
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write(bytes);
  f.close();
  const QString out = tmp.filePath("charts");
  const CliResult r = runCli(QStringList{"export", "--report", f.fileName(), "--out", out} + extra);
  QVERIFY2(r.finished && r.exitCode == 2, qPrintable(r.describe()));
  QVERIFY2(QString::fromUtf8(r.err).contains(message), r.err.constData());
  QVERIFY(!QFileInfo::exists(out));  // refused before the folder is made
}

QTEST_GUILESS_MAIN(TestCliExport)
#include "test_cli_export.moc"
