// The loader of a Python run's report (core/report/python_report.h): the committed report of
// examples/peak_lines.py (written by `python3 -m matmulviz ... --report`) reads back with its
// events, allocations, frames, holders and peak; every bad file is refused with a
// ReportLoadError naming the file and the key path.
#include "core/report/json_reader.h"
#include "core/report/python_report.h"
#include "core/report/python_run.h"

#include <QtTest>

#include <fstream>
#include <sstream>

using namespace matmulviz;

namespace {

const std::string kFixture = MATMULVIZ_PYTHON_RUNS_DIR "/peak_lines.report.json";

nlohmann::json fixtureJson() {
  std::ifstream in(kFixture);
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

/// The problem parsePythonReport states for `text`, or "" when it loads.
QString problemOf(const std::string& text) {
  try {
    parsePythonReport(text, "run.json");
  } catch (const ReportLoadError& e) {
    if (e.file() != "run.json") return "wrong file: " + QString::fromStdString(e.file());
    if (std::string(e.what()).rfind("'run.json': ", 0) != 0) return "what() lacks the file";
    return QString::fromStdString(e.problem());
  }
  return {};
}

}  // namespace

class TestPythonReport : public QObject {
  Q_OBJECT
 private slots:
  void readsTheFixture() {
    const PythonReport r = readPythonReportFile(kFixture);
    const nlohmann::json j = fixtureJson();
    QCOMPARE(r.script.value_or(""), std::string("examples/peak_lines.py"));
    QVERIFY(r.complete);
    QVERIFY(r.error.empty());
    QCOMPARE(r.deviceMode, j["device"]["mode"].get<std::string>());
    QCOMPARE(r.events.size(), j["events"]["rows"].size());
    QCOMPARE(r.allocations.size(), j["allocations"]["rows"].size());
    QCOMPARE(r.frames.size(), j["frames"].size());
    QVERIFY(r.ignored.empty());
    // Every event as written: kind by name, counters, op.
    for (size_t i = 0; i < r.events.size(); ++i) {
      const auto& row = j["events"]["rows"][i];
      const std::string kind = j["events"]["kinds"][row[0].get<size_t>()];
      QCOMPARE(std::string(memoryEventKindName(r.events[i].kind)), kind);
      QCOMPARE(r.events[i].allocationId, row[1].get<int64_t>());
      QCOMPARE(r.events[i].after.allocatedBytes, row[4].get<int64_t>());
      QCOMPARE(r.events[i].after.reservedBytes, row[5].get<int64_t>());
    }
    // The peak: the highest allocated, and the gathered copy of line 21 among what is alive.
    QVERIFY(r.peak.has_value());
    int64_t highest = 0;
    for (const MemoryEvent& e : r.events) highest = std::max(highest, e.after.allocatedBytes);
    QCOMPARE(r.peak->allocatedBytes, highest);
    QCOMPARE(r.events[r.peak->event].after.allocatedBytes, highest);
    const PythonAllocation* largest = nullptr;
    for (const int64_t id : r.peak->live) {
      const PythonAllocation* a = r.allocation(id);
      QVERIFY(a);
      if (!largest || a->blockBytes > largest->blockBytes) largest = a;
    }
    QCOMPARE(largest->blockBytes, int64_t(64) << 20);
    QCOMPARE(r.frames[size_t(largest->frame)].line, int64_t(21));
    QCOMPARE(r.frames[size_t(largest->frame)].function, std::string("direct"));
    // What held it at the peak: autograd, for the backward of the batched matmul.
    const auto held = r.keptAliveAtPeak.find(largest->id);
    QVERIFY(held != r.keptAliveAtPeak.end());
    QVERIFY(held->second.front().why.find("BmmBackward0") != std::string::npos);
    // The script's variables when it ended: each names a block of the run, `c` the 4 MiB one.
    QCOMPARE(r.variables.size(), j["variables"].size());
    bool c = false;
    for (const auto& [id, names] : r.variables) {
      QVERIFY(r.allocation(id));
      for (const std::string& n : names)
        if (n == "c") c = r.allocation(id)->blockBytes == int64_t(4) << 20;
    }
    QVERIFY(c);
  }

  void badFiles_data() {
    QTest::addColumn<QString>("edit");
    QTest::addColumn<QString>("problem");
    QTest::newRow("empty") << "empty"
                           << "the file is empty";
    QTest::newRow("truncated") << "truncated"
                               << "the file ends early";
    QTest::newRow("not json") << "text"
                              << "not valid JSON";
    QTest::newRow("no envelope") << "format"
                                 << "is not a matmulviz report";
    QTest::newRow("newer") << "version"
                           << "version 2, newer than this matmulviz reads";
    QTest::newRow("other kind") << "kind"
                                << "of kind 'strategies', not of a Python run";
    QTest::newRow("negative bytes") << "bytes"
                                    << "events.rows[3][2] is -5";
    QTest::newRow("negative time") << "time"
                                   << "events.rows[0][3] is negative";
    QTest::newRow("op out of range") << "op"
                                     << "allocations.rows[0][2] is 999";
    QTest::newRow("frame out of range") << "frame"
                                        << "allocations.rows[1][6] is 12345";
    QTest::newRow("missing column") << "column"
                                    << "events.columns has no column 'reserved'";
    QTest::newRow("short row") << "row"
                               << "events.rows[2] has 2 values; the columns name 7";
    QTest::newRow("unknown pool") << "pool"
                                  << "allocations.rows[0][5] is 'medium'";
    QTest::newRow("unknown kind") << "kinds"
                                  << "events.kinds[0] is 'malloc'";
    QTest::newRow("peak event") << "peak"
                                << "peak.event is";
    QTest::newRow("holder key") << "holder"
                                << "kept_alive_by.x is not an allocation id";
    QTest::newRow("complete mistyped") << "complete"
                                       << "complete must be true or false";
    QTest::newRow("torch without version") << "torch"
                                           << "torch.version is missing";
    QTest::newRow("value read count") << "reads"
                                      << "value_reads[0].count is 0";
  }

  void badFiles() {
    QFETCH(QString, edit);
    QFETCH(QString, problem);
    nlohmann::json j = fixtureJson();
    std::string text;
    const std::string e = edit.toStdString();
    if (e == "empty") text = "  \n";
    if (e == "truncated") text = j.dump().substr(0, 500);
    if (e == "text") text = "frames: none";
    if (e == "format") j.erase("format");
    if (e == "version") j["version"] = 2;
    if (e == "kind") j["kind"] = "strategies";
    if (e == "bytes") j["events"]["rows"][3][2] = -5;
    if (e == "time") j["events"]["rows"][0][3] = -1.5;
    if (e == "op") j["allocations"]["rows"][0][2] = 999;
    if (e == "frame") j["allocations"]["rows"][1][6] = 12345;
    if (e == "column") j["events"]["columns"][5] = "reserve";
    if (e == "row") j["events"]["rows"][2] = {0, 1};
    if (e == "pool") j["allocations"]["rows"][0][5] = "medium";
    if (e == "kinds") j["events"]["kinds"][0] = "malloc";
    if (e == "peak") j["peak"]["event"] = j["events"]["rows"].size();
    if (e == "holder") j["kept_alive_by"]["x"] = nlohmann::json::array();
    if (e == "complete") j["complete"] = "yes";
    if (e == "variables") j["variables"]["2"] = {7};
    if (e == "torch") j["torch"] = {{"cuda_branches", true}};
    if (e == "reads")
      j["value_reads"] = {{{"file", "a.py"},
                           {"line", 3},
                           {"code", "x.item()"},
                           {"read", "Tensor.item()"},
                           {"count", 0},
                           {"returned", "0.0"}}};
    if (text.empty()) text = j.dump();
    const QString got = problemOf(text);
    QVERIFY2(got.contains(problem), qPrintable("got: " + got));
  }

  void categoriesWhenWritten() {
    nlohmann::json j = fixtureJson();  // written before the column: everything reads as other
    QCOMPARE(parsePythonReport(j.dump(), "run.json").allocations[0].category,
             MemoryCategory::Other);
    j["allocations"]["columns"].push_back("category");
    for (auto& row : j["allocations"]["rows"]) row.push_back("gradients");
    j["allocations"]["rows"][0].back() = "saved for backward";
    const PythonReport r = parsePythonReport(j.dump(), "run.json");
    QCOMPARE(r.allocations[0].category, MemoryCategory::SavedForBackward);
    QCOMPARE(r.allocations[1].category, MemoryCategory::Gradients);
    const PythonRun run = pythonRunFromReport(r);  // the Memory view stacks by it
    QCOMPARE(run.timeline.records[0].category, MemoryCategory::SavedForBackward);
    j["allocations"]["rows"][1].back() = "weights";
    const QString got = problemOf(j.dump());
    QVERIFY2(got.contains("allocations.rows[1][8] is 'weights', not a memory category"),
             qPrintable(got));
  }

  void unknownKeysAreListed() {
    nlohmann::json j = fixtureJson();
    j["from_the_future"] = 1;
    const PythonReport r = parsePythonReport(j.dump(), "run.json");
    QCOMPARE(r.ignored, std::vector<std::string>{"from_the_future"});
  }

  void torchAndValueReads() {  // what matmulviz.simulate adds; the run carries them
    nlohmann::json j = fixtureJson();
    QVERIFY(!parsePythonReport(j.dump(), "run.json").torch);
    j["torch"] = {{"version", "2.11.0+cu130"}, {"cuda_branches", true}};
    j["value_reads"] = {{{"file", "/w/train.py"},
                         {"line", 25},
                         {"code", "print(loss.item())"},
                         {"read", "Tensor.item()"},
                         {"count", 3},
                         {"returned", "0.0"}}};
    const PythonRun run = pythonRunFromReport(parsePythonReport(j.dump(), "run.json"));
    QVERIFY(run.torch && run.torch->cudaBranches);
    QCOMPARE(run.torch->version, std::string("2.11.0+cu130"));
    QCOMPARE(run.valueReads.size(), size_t(1));
    QCOMPARE(run.valueReads[0].line, int64_t(25));
    QCOMPARE(run.valueReads[0].count, int64_t(3));
    QCOMPARE(run.valueReads[0].read, std::string("Tensor.item()"));
    QVERIFY(!run.pinnedHost);
  }

  void pinnedHostMemory() {  // a run that pinned host memory; a negative size is refused
    nlohmann::json j = fixtureJson();
    j["pinned_host"] = {
        {"peak_active_bytes", 1 << 20}, {"peak_held_bytes", 3 << 20}, {"pinned_tensors", 8}};
    const PythonRun run = pythonRunFromReport(parsePythonReport(j.dump(), "run.json"));
    QVERIFY(run.pinnedHost);
    QCOMPARE(run.pinnedHost->peakActiveBytes, int64_t(1 << 20));
    QCOMPARE(run.pinnedHost->peakHeldBytes, int64_t(3 << 20));
    QCOMPARE(run.pinnedHost->pinnedTensors, int64_t(8));
    j["pinned_host"]["peak_held_bytes"] = -1;
    QVERIFY(problemOf(j.dump()).contains("pinned_host.peak_held_bytes"));
  }

  void anIncompleteRunAndNoPeak() {
    nlohmann::json j = fixtureJson();
    j["complete"] = false;
    j["error"] = "Traceback (most recent call last):\nValueError: boom";
    j["peak"] = nullptr;
    const PythonReport r = parsePythonReport(j.dump(), "run.json");
    QVERIFY(!r.complete);
    QVERIFY(r.error.find("ValueError: boom") != std::string::npos);
    QVERIFY(!r.peak.has_value());
  }

  void aMissingFileIsNamed() {
    try {
      readPythonReportFile("/nonexistent/folder/run.json");
      QFAIL("no error");
    } catch (const ReportLoadError& e) {
      QCOMPARE(QString::fromUtf8(e.what()), QString("'run.json': the file cannot be opened"));
    }
  }
};

QTEST_GUILESS_MAIN(TestPythonReport)
#include "test_python_report.moc"
