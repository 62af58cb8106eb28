// `matmulviz-cli launch` end to end: the JSON of the README's command-line section, the trace
// file, and exit code 2 with a message naming the argument for bad input.
#include "tests/common/cli_process.h"

#include <QRegularExpression>
#include <QtTest>

#include <set>
#include <string>

#include <nlohmann/json.hpp>

namespace {

using Result = matmulviz::testing::CliResult;

Result runCli(const QStringList& args) {
  return matmulviz::testing::runCliProcess(QStringLiteral(MATMULVIZ_CLI),
                                           QStringList{"launch"} + args);
}

}  // namespace

class TestLaunchCli : public QObject {
  Q_OBJECT
 private slots:
  void lessonJson() {
    const Result r = runCli({"--kernel", "naive", "--m", "5", "--k", "784", "--n", "10", "--tpb",
                             "16", "--json", "-", "--model", "h100"});
    QCOMPARE(r.exitCode, 0);
    const nlohmann::json j = nlohmann::json::parse(r.out.toStdString());
    for (const char* key :
         {"kernel", "grid", "block", "threads", "active_threads", "global_loads", "global_stores",
          "max_rel_err", "time_s", "sim_threads_per_s", "diagnostics"}) {
      QVERIFY2(j.contains(key), key);
    }
    QCOMPARE(j["grid"], nlohmann::json({1, 1, 1}));
    QCOMPARE(j["block"], nlohmann::json({16, 16, 1}));
    QCOMPARE(j["threads"].get<int>(), 256);
    QCOMPARE(j["active_threads"].get<int>(), 50);
    QCOMPARE(j["global_loads"].get<int>(), 2 * 5 * 10 * 784);
    QCOMPARE(j["global_stores"].get<int>(), 50);
    QVERIFY(j["max_rel_err"].get<double>() < 1e-5);
    QVERIFY(j["diagnostics"].empty());
    QCOMPARE(j["model"]["launches"].get<int>(), 1);
    QVERIFY(j["model"]["predicted_s"].get<double>() > 0);
  }

  void traceFile() {
    QTemporaryDir dir;
    const QString path = dir.filePath("trace.json");
    const Result r = runCli({"--kernel", "smem_tiled", "--m", "7", "--k", "9", "--n", "5", "--tpb",
                             "4", "--trace", path, "--trace-cap", "1KiB", "--json", "-"});
    QCOMPARE(r.exitCode, 0);
    const nlohmann::json report = nlohmann::json::parse(r.out.toStdString());
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const nlohmann::json trace = nlohmann::json::parse(f.readAll().toStdString());
    QCOMPARE(trace["events"].size(), std::size_t(1024 / 20));
    QVERIFY(trace["events_dropped"].get<int>() > 0);
    QCOMPARE(report["trace"]["events_dropped"], trace["events_dropped"]);
  }

  void faultyKernelReportsItsRace() {
    const Result r = runCli({"--kernel", "smem_tiled_no_sync", "--m", "40", "--k", "37", "--n",
                             "33", "--tpb", "8", "--json", "-"});
    QCOMPARE(r.exitCode, 0);  // diagnostics are the report, as for any kernel
    const nlohmann::json j = nlohmann::json::parse(r.out.toStdString());
    QCOMPARE(j["kernel"].get<std::string>(), std::string("smem_tiled_no_sync"));
    QVERIFY(j["diagnostic_counts"]["shared_race"].get<long long>() > 0);
    QCOMPARE(j["diagnostic_counts"]["out_of_bounds"].get<int>(), 0);
    QCOMPARE(j["diagnostic_counts"]["barrier_divergence"].get<int>(), 0);
    QVERIFY(!j["diagnostics"].empty());
    QCOMPARE(j["diagnostics"][0]["kind"].get<std::string>(), std::string("shared_race"));
  }

  // Threads whose every global access is out of bounds are neither active nor idle: 37 x 23
  // with TPB 8 gives a 40 x 24 grid; the 3 x 1 threads past both edges only fault.
  void outOfBoundsOnlyThreads() {
    const QStringList args{
        "--kernel", "naive_no_bounds_check", "--m", "37", "--k", "19", "--n", "23", "--tpb", "8"};
    const Result r = runCli(args + QStringList{"--json", "-"});
    QCOMPARE(r.exitCode, 0);
    const nlohmann::json j = nlohmann::json::parse(r.out.toStdString());
    QCOMPARE(j["threads"].get<int>(), 960);
    QCOMPARE(j["active_threads"].get<int>(), 40 * 24 - 3);
    QCOMPARE(j["out_of_bounds_only_threads"].get<int>(), 3);
    QCOMPARE(j["idle_threads"].get<int>(), 0);
    const Result text = runCli(args);
    QCOMPARE(text.exitCode, 0);
    QVERIFY2(text.out.contains("threads 960: 957 active, 0 idle (no global access), 3 whose every "
                               "global access is out of bounds"),
             text.out.constData());
  }

  // A barrier that diverges phase after phase is listed once per barrier and block.
  void divergentBarrierListedOnce() {
    const Result r = runCli({"--kernel", "smem_tiled_divergent_barrier", "--m", "37", "--k", "19",
                             "--n", "23", "--tpb", "8", "--json", "-"});
    QCOMPARE(r.exitCode, 0);
    const nlohmann::json j = nlohmann::json::parse(r.out.toStdString());
    QVERIFY(j["diagnostic_counts"]["barrier_divergence"].get<int>() >
            static_cast<int>(j["diagnostics"].size()));
    std::set<std::string> messages;
    int repeats = 0;  // every counted phase is in the list, once per barrier and block
    for (const auto& d : j["diagnostics"]) {
      const std::string m = d["message"].get<std::string>();
      QVERIFY2(messages.insert(m).second, m.c_str());
      repeats += d["repeats"].get<int>();
    }
    QCOMPARE(repeats, j["diagnostic_counts"]["barrier_divergence"].get<int>());
    const Result text = runCli({"--kernel", "smem_tiled_divergent_barrier", "--m", "37", "--k",
                                "19", "--n", "23", "--tpb", "8"});
    QVERIFY2(text.out.contains("(the same in 3 barrier phases of this block)"),
             text.out.constData());
    QVERIFY2(!text.out.contains("only the first"), text.out.constData());
  }

  // Times and rates with units: "simulated in 1.23 ms: 2.33 M threads/s", not raw seconds.
  void textHasUnits() {
    const Result r = runCli({"--kernel", "naive", "--m", "5", "--k", "784", "--n", "10"});
    QCOMPARE(r.exitCode, 0);
    const QRegularExpression simulated(
        QStringLiteral("simulated in [0-9.]+ (ns|us|ms|s): [0-9.]+ (k |M |G )?threads/s\\n"));
    QVERIFY2(QString::fromUtf8(r.out).contains(simulated), r.out.constData());
  }

  void faultyKernelRefusedOnCuda() {
    const Result r = runCli({"--kernel", "smem_tiled_no_sync", "--m", "40", "--k", "37", "--n",
                             "33", "--tpb", "8", "--device", "cuda"});
    QCOMPARE(r.exitCode, 2);
    const QString err = QString::fromUtf8(r.err);
    QVERIFY2(err.contains("wrong on purpose") && err.contains("--device cpu"), r.err.constData());
    QVERIFY(r.out.isEmpty());
  }

  void unknownKernelListsTeachingKernels() {
    const Result r = runCli({"--kernel", "tiled"});
    QCOMPARE(r.exitCode, 2);
    const QString err = QString::fromUtf8(r.err);
    QVERIFY2(err.contains("naive|coalesced|smem_tiled|gather_bmm") &&
                 err.contains("smem_tiled_no_sync|naive_no_bounds_check"),
             r.err.constData());
  }

  void badInput_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("mentions");
    QTest::addRow("tpb 0") << QStringList{"--tpb", "0"} << "--tpb";
    QTest::addRow("tpb 33") << QStringList{"--tpb", "33"} << "1024";
    QTest::addRow("tpb 1.5") << QStringList{"--tpb", "1.5"}
                             << "--tpb: '1.5' is not a whole number (allowed: 1 to 32)";
    QTest::addRow("trace blocks 5-2")
        << QStringList{"--trace", "/tmp/never.json", "--trace-blocks", "5-2"}
        << "--trace-blocks: the range '5-2' ends before it starts";
    QTest::addRow("trace blocks x")
        << QStringList{"--trace", "/tmp/never.json", "--trace-blocks", "x"}
        << "--trace-blocks: 'x' is not a block id";
    QTest::addRow("trace in /proc/1")
        << QStringList{"--trace", "/proc/1/x"} << "--trace: cannot create a file in '/proc/1'";
    QTest::addRow("m negative") << QStringList{"--m", "-5"} << "--m: '-5' is negative";
    QTest::addRow("m 0") << QStringList{"--m", "0"} << "--m";
    QTest::addRow("k not a number") << QStringList{"--k", "many"} << "--k";
    QTest::addRow("unknown kernel") << QStringList{"--kernel", "tiled"} << "--kernel";
    QTest::addRow("grid beyond CUDA")
        << QStringList{"--kernel", "coalesced", "--m", "70000", "--tpb", "1"}
        << "gridDim.y = 70000";
    QTest::addRow("trace block outside grid")
        << QStringList{"--trace", "/tmp/never.json", "--trace-blocks", "3"} << "--trace-blocks";
    QTest::addRow("bad trace cap")
        << QStringList{"--trace", "/tmp/never.json", "--trace-cap", "12x"} << "--trace-cap";
    QTest::addRow("unknown model") << QStringList{"--model", "v100"} << "--model";
    QTest::addRow("unknown device") << QStringList{"--device", "tpu"} << "--device";
  }
  void badInput() {
    QFETCH(QStringList, args);
    QFETCH(QString, mentions);
    const Result r = runCli(args);
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(QString::fromUtf8(r.err).contains(mentions), r.err.constData());
  }
};

QTEST_GUILESS_MAIN(TestLaunchCli)
#include "test_launch_cli.moc"
