// matmulviz-cli compare RUN.json SNAPSHOT.pickle, end to end: a Python run's report of a program
// of tests/reference/gpu/programs against the real H200 snapshot of the same statements, aligned
// event by event (text and JSON): no divergence for mlp_backward, and the one extra temporary of
// mlp_backward_extra_temporary named as the first divergence, from the snapshot as from the
// unchanged run. The run reports are
// fixtures (tests/reference/gpu/runs, made by make_runs.sh there); the engine itself is checked
// against the snapshots by tests/python/test_gpu_snapshots.py.

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

QString gpu(const QString& path) {
  return QStringLiteral(MATMULVIZ_GPU_DIR "/") + path;
}

}  // namespace

class TestCliCompareSnapshot : public QObject {
  Q_OBJECT

 private slots:
  void text_data() {
    QTest::addColumn<QString>("a");
    QTest::addColumn<QString>("b");
    QTest::addColumn<QStringList>("expected");
    const QString run = gpu("runs/mlp_backward.json");
    const QString extra = gpu("runs/mlp_backward_extra_temporary.json");
    const QString snap = gpu("snapshots/mlp_backward.pickle");
    QTest::newRow("run against its snapshot")
        << run << snap
        << QStringList{"events: mlp_backward.json vs mlp_backward.pickle cuda:0",
                       "A: 33 allocs and frees, starting after the script's "
                       "torch.cuda.memory._record_memory_history(), 1 block alive then; at "
                       "the start: requests 32 MiB, reserved 32 MiB",
                       "B: 33 allocs and frees, starting at the snapshot's first traced event "
                       "(1 block alive before the recording); at the start: requests 32 MiB, "
                       "reserved 32 MiB",
                       "no divergence (33 events matched)",
                       "live requests: B - A at the start: 0 B, the same at every matched event"};
    const QString extraLine =
        "alloc 4000 B (3.91 KiB) by empty at mlp_backward_extra_temporary.py:22 `extra = "
        "torch.empty(1000, device=dev)  # the one statement the GPU's program does not have`";
    QTest::newRow("one more temporary against the snapshot")
        << extra << snap
        << QStringList{"first divergence at row 3, only in A: A: event 3, " + extraLine +
                       "; B: nothing"};
    QTest::newRow("one more temporary against the run")
        << extra << run
        << QStringList{"first divergence at row 3, only in A: A: event 3, " + extraLine +
                       "; B: nothing"};
    QTest::newRow("the other way round")
        << run << extra
        << QStringList{"first divergence at row 3, only in B: A: nothing; B: event 3, " +
                       extraLine};
    QTest::newRow("a snapshot against itself")
        << snap << snap << QStringList{"no divergence (33 events matched)"};
  }
  void text() {
    QFETCH(QString, a);
    QFETCH(QString, b);
    QFETCH(QStringList, expected);
    const CliResult r = runCli({"compare", a, b, "--rows", "0"});
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const QString out = QString::fromUtf8(r.out);
    for (const QString& line : expected)
      QVERIFY2(out.contains(line), qPrintable(line + "\n" + out));
  }
  /// The run's memory timeline starts at its record mark, as the snapshot's starts at its trace:
  /// both have as many events and peak at the same one.
  void timelinesStartTogether() {
    const CliResult r =
        runCli({"compare", gpu("runs/mlp_backward.json"), gpu("snapshots/mlp_backward.pickle")});
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const QString out = QString::fromUtf8(r.out);
    QVERIFY2(out.contains("(43 events in A, 43 in B; A from its script's "
                          "torch.cuda.memory._record_memory_history(), B from its trace's start;"),
             qPrintable(out));
    static const QRegularExpression peak(R"(peak allocated +\S+ MiB @(\d+) +\S+ MiB @(\d+))");
    const QRegularExpressionMatch m = peak.match(out);
    QVERIFY2(m.hasMatch(), qPrintable(out));
    QCOMPARE(m.captured(1), m.captured(2));
  }
  void json() {
    const CliResult r = runCli({"compare", gpu("runs/mlp_backward_extra_temporary.json"),
                                gpu("snapshots/mlp_backward.pickle"), "--json", "-"});
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const QJsonObject doc = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(doc["kind"].toString(), QString("compare"));
    const QJsonArray sequences = doc["sequences"].toArray();
    QCOMPARE(sequences.size(), 1);
    const QJsonObject s = sequences[0].toObject();
    QCOMPARE(s["matched"].toInt(), 33);
    QCOMPARE(s["a"].toObject()["events"].toInt(), 35);
    QCOMPARE(s["b"].toObject()["start_requested_bytes"].toInteger(), 33554432);
    const QJsonObject d = s["first_divergence"].toObject();
    QCOMPARE(d["row"].toInt(), 3);
    QCOMPARE(d["kind"].toString(), QString("only in A"));
    QVERIFY(d["b"].isNull());
    const QJsonObject e = d["a"].toObject();
    QCOMPARE(e["action"].toString(), QString("alloc"));
    QCOMPARE(e["bytes"].toInt(), 4000);
    QCOMPARE(e["op"].toString(), QString("empty"));
    QVERIFY2(e["where"].toString().startsWith("mlp_backward_extra_temporary.py:22 "),
             qPrintable(e["where"].toString()));
    // Matched rows carry both sides' totals; the extra block's free is the only other odd row.
    const QJsonArray rows = s["rows"].toArray();
    QCOMPARE(rows.size(), 35);
    int odd = 0;
    for (const QJsonValue& row : rows) odd += row.toObject()["kind"].toString() != "match";
    QCOMPARE(odd, 2);
    QVERIFY(s["first_requested_drift_row"].isNull());
  }
  void damagedSnapshot() {
    QTemporaryDir dir;
    const QString path = dir.filePath("damaged.pickle");
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("\x80\x04\x95garbage");
    f.close();
    const CliResult r = runCli({"compare", gpu("runs/mlp_backward.json"), path});
    QVERIFY2(r.finished && r.exitCode == 2, qPrintable(r.describe()));
    QVERIFY2(QString::fromUtf8(r.err).contains("damaged.pickle"), qPrintable(r.describe()));
  }
};

QTEST_GUILESS_MAIN(TestCliCompareSnapshot)
#include "test_cli_compare_snapshot.moc"
