// The report loader (core/report/report_load.h): a report written by the writer the CLI uses
// (toJson) reads back into the same StrategiesReport, timeline included; every bad file is
// refused with a ReportLoadError naming the file and the problem.
#include "core/report/report_json.h"
#include "core/report/report_load.h"
#include "core/strategies/runner.h"

#include <QTemporaryDir>
#include <QtTest>

#include <fstream>
#include <nlohmann/json.hpp>

using namespace matmulviz;

namespace {

/// A small cpu run of every strategy with a backward and the timeline recorded.
StrategiesReport smallRun(bool timeline) {
  RunConfig c;
  c.workload = {64, 8, 2, 4, 3, 16, DType::Float32};
  c.requiresGrad.a = true;
  c.backward = true;
  c.repeats = 2;
  c.recordTimeline = timeline;
  StrategyRunner runner(c, makeRandomInputs(c.workload, 5));
  return runner.run();
}

std::string text(const StrategiesReport& r) {
  return toJson(r, TimelineInJson::Include).dump(2);
}

/// The problem parseReport states for `json`, or "" when it loads.
QString problemOf(const std::string& json) {
  try {
    parseReport(json, "r.json");
  } catch (const ReportLoadError& e) {
    if (e.file() != "r.json") return "wrong file: " + QString::fromStdString(e.file());
    if (std::string(e.what()).rfind("'r.json': ", 0) != 0) return "what() lacks the file";
    return QString::fromStdString(e.problem());
  }
  return {};
}

/// The report's JSON with `edit` applied.
template <typename F>
std::string edited(F&& edit) {
  static const nlohmann::ordered_json base = toJson(smallRun(false));
  nlohmann::ordered_json j = base;
  edit(j);
  return j.dump();
}

void compareTimelines(const MemoryTimeline& a, const MemoryTimeline& b) {
  QCOMPARE(b.opNames, a.opNames);
  QCOMPARE(b.statementEndUs, a.statementEndUs);
  QCOMPARE(b.events.size(), a.events.size());
  for (size_t x = 0; x < a.events.size(); ++x) {
    const MemoryEvent &e = a.events[x], &f = b.events[x];
    QCOMPARE(f.kind, e.kind);
    QCOMPARE(f.allocationId, e.allocationId);
    QCOMPARE(f.bytes, e.bytes);
    QCOMPARE(f.timeUs, e.timeUs);
    QCOMPARE(f.after.allocatedBytes, e.after.allocatedBytes);
    QCOMPARE(f.after.requestedBytes, e.after.requestedBytes);
    QCOMPARE(f.after.reservedBytes, e.after.reservedBytes);
    QCOMPARE(f.opId, e.opId);
  }
  QCOMPARE(b.records.size(), a.records.size());
  for (size_t x = 0; x < a.records.size(); ++x) {
    const AllocationRecord &r = a.records[x], &s = b.records[x];
    QCOMPARE(s.id, r.id);
    QCOMPARE(s.label, r.label);
    QCOMPARE(s.opId, r.opId);
    QCOMPARE(s.requestedBytes, r.requestedBytes);
    QCOMPARE(s.blockBytes, r.blockBytes);
    QCOMPARE(s.small, r.small);
    QCOMPARE(s.alive, r.alive);
    QCOMPARE(s.category, r.category);
  }
  QCOMPARE(b.aliveWhy, a.aliveWhy);
}

}  // namespace

class TestReportLoad : public QObject {
  Q_OBJECT
 private slots:
  void roundTripKeepsEveryField();
  void roundTripWithoutTimeline();
  void readsAFile();
  void refusesBadFiles_data();
  void refusesBadFiles();
  void versionsAreNamed();
  void unknownKeysAreListed();
  void pythonRun();
  void pythonRunRefusals_data();
  void pythonRunRefusals();
};

void TestReportLoad::roundTripKeepsEveryField() {
  const StrategiesReport a = smallRun(true);
  QVERIFY(!a.runs.at(0).timeline.events.empty());
  const LoadedReport loaded = parseReport(text(a), "r.json");
  QCOMPARE(loaded.kind, std::string("strategies"));
  QVERIFY(loaded.ignored.empty());
  const StrategiesReport& b = loaded.report;
  QCOMPARE(b.workload.n, a.workload.n);
  QCOMPARE(b.workload.batch, a.workload.batch);
  QCOMPARE(b.workload.dtype, a.workload.dtype);
  QCOMPARE(b.device, a.device);
  QCOMPARE(b.notes, a.notes);
  QCOMPARE(b.runs.size(), a.runs.size());
  for (size_t x = 0; x < a.runs.size(); ++x) {
    const StrategyRun &r = a.runs[x], &s = b.runs[x];
    QCOMPARE(s.strategy, r.strategy);
    QCOMPARE(s.requiresGrad, r.requiresGrad);
    QCOMPARE(s.ok, r.ok);
    QCOMPARE(s.time.median, r.time.median);
    QCOMPARE(s.time.cold, r.time.cold);
    QCOMPARE(s.current.allocatedBytes, r.current.allocatedBytes);
    QCOMPARE(s.peak.allocatedBytes, r.peak.allocatedBytes);
    QCOMPARE(s.peak.requestedBytes, r.peak.requestedBytes);
    QCOMPARE(s.peak.reservedBytes, r.peak.reservedBytes);
    QCOMPARE(s.outputShape, r.outputShape);
    QCOMPARE(s.maxRelErr, r.maxRelErr);
    QCOMPARE(s.forwardFlops, r.forwardFlops);
    QCOMPARE(s.keptAlive.size(), r.keptAlive.size());
    for (size_t k = 0; k < r.keptAlive.size(); ++k) {
      QCOMPARE(s.keptAlive[k].label, r.keptAlive[k].label);
      QCOMPARE(s.keptAlive[k].bytes, r.keptAlive[k].bytes);
      QCOMPARE(s.keptAlive[k].count, r.keptAlive[k].count);
      QCOMPARE(s.keptAlive[k].why, r.keptAlive[k].why);
    }
    QCOMPARE(s.backward.status, r.backward.status);
    QCOMPARE(s.backward.maxMemBytes, r.backward.maxMemBytes);
    QCOMPARE(s.backward.curMemBytes, r.backward.curMemBytes);
    QCOMPARE(s.backward.flops, r.backward.flops);
    QCOMPARE(s.backward.maxRelErrDA, r.backward.maxRelErrDA);
    compareTimelines(r.timeline, s.timeline);
  }
  // Written again, the loaded report is the same document.
  QCOMPARE(text(b), text(a));
}

void TestReportLoad::roundTripWithoutTimeline() {
  // A recorded timeline is written only when asked for.
  const nlohmann::ordered_json omitted = toJson(smallRun(true));
  QVERIFY(!omitted.at("runs").at(0).contains("timeline"));
  QVERIFY(parseReport(omitted.dump(), "r.json").report.runs.at(0).timeline.events.empty());
  const StrategiesReport a = smallRun(false);
  const StrategiesReport b = parseReport(text(a), "r.json").report;
  QCOMPARE(b.runs.size(), a.runs.size());
  for (const StrategyRun& r : b.runs) QVERIFY(r.timeline.events.empty());
  QCOMPARE(text(b), text(a));
}

void TestReportLoad::readsAFile() {
  QTemporaryDir dir;
  const std::string path = dir.filePath("run.json").toStdString();
  const StrategiesReport a = smallRun(false);
  std::ofstream(path) << text(a);
  QCOMPARE(readReportFile(path).report.runs.size(), a.runs.size());
  std::ofstream(path, std::ios::trunc).flush();  // now empty
  try {
    readReportFile(path);
    QFAIL("an empty file was read");
  } catch (const ReportLoadError& e) {
    QCOMPARE(e.file(), std::string("run.json"));  // the name, never the folder
    QCOMPARE(e.problem(), std::string("the file is empty"));
  }
  try {
    readReportFile(dir.filePath("missing.json").toStdString());
    QFAIL("a missing file was read");
  } catch (const ReportLoadError& e) {
    QCOMPARE(e.file(), std::string("missing.json"));
  }
}

void TestReportLoad::refusesBadFiles_data() {
  QTest::addColumn<QByteArray>("json");
  QTest::addColumn<QString>("problem");
  const std::string good = text(smallRun(false));
  auto row = [](const char* name, const std::string& json, const char* problem) {
    QTest::newRow(name) << QByteArray::fromStdString(json) << QString(problem);
  };
  row("empty", "", "the file is empty");
  row("blank", "  \n", "the file is empty");
  row("truncated", good.substr(0, good.size() / 2),
      "the file ends early (truncated?): parse error at line");
  row("not json", "{\"format\": matmulviz}", "the file is not valid JSON: parse error at line 1");
  row("array", "[1, 2]", "the file is not a matmulviz report");
  row("other json", "{\"runs\": []}", "the file is not a matmulviz report");
  row("huge number", "{\"format\": \"matmulviz-report\", \"version\": 1E999}",
      "the file is not valid JSON");
  row("negative bytes", edited([](auto& j) { j["runs"][0]["max_mem_bytes"] = -5; }),
      "runs[0].max_mem_bytes is -5 (allowed: 0 to 9223372036854775807)");
  row("negative kept bytes", edited([](auto& j) { j["runs"][1]["kept_alive"][0]["bytes"] = -1; }),
      "runs[1].kept_alive[0].bytes is -1");
  row("negative size", edited([](auto& j) { j["workload"]["n"] = -64; }),
      "workload.n is -64 (allowed: 1 to 1099511627776)");
  row("negative time", edited([](auto& j) { j["runs"][0]["time_s"]["median"] = -0.5; }),
      "runs[0].time_s.median is negative");
  row("string for bytes", edited([](auto& j) { j["runs"][2]["cur_mem_bytes"] = "12"; }),
      "runs[2].cur_mem_bytes must be a whole number (allowed: 0 to 9223372036854775807), but "
      "is a string");
  row("fraction", edited([](auto& j) { j["runs"][0]["cur_mem_bytes"] = 1.5; }),
      "runs[0].cur_mem_bytes is 1.5, not a whole number");
  row("ok not bool", edited([](auto& j) { j["runs"][0]["ok"] = 1; }),
      "runs[0].ok must be true or false, but is a number");
  row("runs not array", edited([](auto& j) {
        j["runs"] = {{"a", 1}};
      }),
      "runs must be an array, but is an object");
  row("missing runs", edited([](auto& j) { j.erase("runs"); }), "runs is missing");
  row("missing strategy", edited([](auto& j) { j["runs"][0].erase("strategy"); }),
      "runs[0].strategy is missing");
  row("bad dtype", edited([](auto& j) { j["workload"]["dtype"] = "float99"; }),
      "workload.dtype is 'float99', not a dtype");
  row("bad device", edited([](auto& j) { j["device"] = "tpu"; }),
      "device is 'tpu' (allowed: cpu, meta, cuda)");
  row("bad backward", edited([](auto& j) { j["runs"][0]["backward"]["status"] = "maybe"; }),
      "runs[0].backward.status is 'maybe' (allowed: ran, skipped, failed)");
  row("other kind", edited([](auto& j) { j["kind"] = "einsum"; }),
      "the file is a report of kind 'einsum'");
  row("python kind without ops", edited([](auto& j) { j["kind"] = "python"; }), "ops is missing");
  row("missing version", edited([](auto& j) { j.erase("version"); }), "version is missing");
  row("version string", edited([](auto& j) { j["version"] = "1"; }),
      "version must be a whole number");
}

void TestReportLoad::refusesBadFiles() {
  QFETCH(QByteArray, json);
  QFETCH(QString, problem);
  const QString got = problemOf(json.toStdString());
  QVERIFY2(!got.isEmpty(), "the file was accepted");
  QVERIFY2(got.startsWith(problem), qPrintable(got));
}

void TestReportLoad::versionsAreNamed() {
  const QString newer = problemOf(edited([](auto& j) { j["version"] = 2; }));
  QVERIFY2(newer.contains("version 2, newer than this matmulviz reads (version 1)"),
           qPrintable(newer));
  const QString older = problemOf(edited([](auto& j) { j["version"] = 0; }));
  QVERIFY2(older.contains("version 0") && older.contains("reads version 1"), qPrintable(older));
}

void TestReportLoad::unknownKeysAreListed() {
  const std::string json = edited([](auto& j) {
    j["comment"] = "from the GPU box";
    j["runs"][0]["energy_j"] = 3;
    j["runs"][0]["predicted"] = {{"model", "h100"}};  // --model: known, recomputed by the app
  });
  const LoadedReport loaded = parseReport(json, "r.json");
  QCOMPARE(loaded.ignored, (std::vector<std::string>{"comment", "runs[0].energy_j"}));
}

namespace {

nlohmann::json pythonFixture() {
  std::ifstream in(MATMULVIZ_REPORT_DIR "/python_small_run.json");
  return nlohmann::json::parse(in);
}

}  // namespace

// The report of tests/reference/reports/python_small_run.py: five blocks of 512 bytes (a, c, q
// copied to the device, the indexed copy c[q], the bmm output), all freed when the script ends.
void TestReportLoad::pythonRun() {
  const LoadedReport loaded = parseReport(pythonFixture().dump(), "run.json");
  QCOMPARE(loaded.kind, std::string("python"));
  QVERIFY(loaded.python.has_value());
  QVERIFY(loaded.ignored.empty());
  const PythonRun& run = *loaded.python;
  QCOMPARE(run.script, std::string("python_small_run.py"));
  QVERIFY(run.complete);
  const MemoryTimeline& t = run.timeline;
  QCOMPARE(t.opNames, (std::vector<std::string>{"(none)", "to", "index", "bmm"}));
  QCOMPARE(t.records.size(), size_t(5));
  QCOMPARE(t.records[3].label, std::string("indexed copy at python_small_run.py:8"));
  QCOMPARE(t.records[3].requestedBytes, int64_t(256));
  QCOMPARE(t.events.size(), size_t(11));
  QCOMPARE(t.events[0].kind, MemoryEventKind::SegmentAlloc);
  QCOMPARE(t.events[5].after.allocatedBytes, int64_t(2560));
  // requested is not in the report: the sum of the live blocks' requests.
  QCOMPARE(t.events[5].after.requestedBytes, int64_t(128 + 96 + 64 + 256 + 64));
  QCOMPARE(t.events.back().after.allocatedBytes, int64_t(0));
  QCOMPARE(t.events.back().after.requestedBytes, int64_t(0));
  QCOMPARE(t.events[5].opId, 3);
}

void TestReportLoad::pythonRunRefusals_data() {
  QTest::addColumn<QByteArray>("json");
  QTest::addColumn<QString>("problem");
  auto row = [](const char* name, auto&& edit, const char* problem) {
    nlohmann::json j = pythonFixture();
    edit(j);
    QTest::newRow(name) << QByteArray::fromStdString(j.dump()) << QString(problem);
  };
  row(
      "negative bytes", [](auto& j) { j["events"]["rows"][1][2] = -512; },
      "events.rows[1][2] is -512 (allowed: 0 to");
  row(
      "frame out of range", [](auto& j) { j["allocations"]["rows"][0][6] = 9; },
      "allocations.rows[0][6] is 9 (allowed: 0 to 3)");
  row(
      "unknown pool", [](auto& j) { j["allocations"]["rows"][0][5] = "huge"; },
      "allocations.rows[0][5] is 'huge' (allowed: small, large)");
  row(
      "unlisted allocation", [](auto& j) { j["events"]["rows"][1][1] = 77; },
      "events.rows[1][1] names allocation 77, which 'allocations' does not list");
  row(
      "short row",
      [](auto& j) {
        j["events"]["rows"][2] = {0, 1};
      },
      "events.rows[2] has 2 values; the columns name 7");
  row(
      "missing column", [](auto& j) { j["events"]["columns"][3] = "when"; },
      "events.columns has no column 'time_us'");
  row(
      "op out of range", [](auto& j) { j["events"]["rows"][0][6] = 4; },
      "events.rows[0][6] is 4 (allowed: 0 to 3)");
  row(
      "bad kept_alive_by",
      [](auto& j) {
        j["kept_alive_by"] = {{"x", nlohmann::json::array()}};
      },
      "kept_alive_by.x is not an allocation id");
}

void TestReportLoad::pythonRunRefusals() {
  QFETCH(QByteArray, json);
  QFETCH(QString, problem);
  const QString got = problemOf(json.toStdString());
  QVERIFY2(got.startsWith(problem), qPrintable(got));
}

QTEST_GUILESS_MAIN(TestReportLoad)
#include "test_report_load.moc"
