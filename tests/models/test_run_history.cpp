// RunHistory and runEntryFromReport: numbers taken from real reports of the small preset, ids,
// signals, and the JSON file round trip (NaN kept as null, malformed files refused).

#include "tests/models/strategies_fixture.h"
#include "ui/models/run_history.h"

#include <QJsonArray>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <cmath>

using namespace matmulviz;
using namespace matmulviz::ui;

class TestRunHistory : public QObject {
  Q_OBJECT
 private slots:
  void entryMatchesReport_data();
  void entryMatchesReport();
  void predictionIsOptional();
  void appendAssignsIdsAndSignals();
  void jsonRoundTrip();
  void malformedJsonIsRefused_data();
  void malformedJsonIsRefused();
  void loadNamesTheFile();
};

Q_DECLARE_METATYPE(matmulviz::DeviceKind)

void TestRunHistory::entryMatchesReport_data() {
  QTest::addColumn<DeviceKind>("device");
  QTest::addColumn<bool>("gradA");
  QTest::addColumn<bool>("gradC");
  QTest::addColumn<QString>("requiresGrad");
  QTest::newRow("meta, none") << DeviceKind::Meta << false << false << "none";
  QTest::newRow("meta, a") << DeviceKind::Meta << true << false << "a";
  QTest::newRow("meta, a,c") << DeviceKind::Meta << true << true << "a,c";
  QTest::newRow("cpu, c") << DeviceKind::Cpu << false << true << "c";
}

void TestRunHistory::entryMatchesReport() {
  QFETCH(DeviceKind, device);
  QFETCH(bool, gradA);
  QFETCH(bool, gradC);
  QFETCH(QString, requiresGrad);
  const StrategiesReport report = testing::runSmall({device, gradA, gradC});
  const RunEntry e = runEntryFromReport(report, "small", costmodel::findGpuProfile("h100"));
  QCOMPARE(e.title, QString("small"));
  QCOMPARE(e.requiresGrad, requiresGrad);
  QCOMPARE(e.device, device == DeviceKind::Meta ? QString("meta") : QString("cpu"));
  QCOMPARE(e.dtype, QString("float32"));
  QCOMPARE(e.workload.value("n").toInteger(), qint64(report.workload.n));
  QCOMPARE(e.workload.value("batch").toInteger(), qint64(report.workload.batch));
  QCOMPARE(e.results.size(), qsizetype(report.runs.size()));
  for (size_t i = 0; i < report.runs.size(); ++i) {
    const StrategyRun& r = report.runs[i];
    const StrategyResult& s = e.results[qsizetype(i)];
    QCOMPARE(s.strategy, QString::fromStdString(r.strategy));
    QCOMPARE(s.ok, r.ok);
    QCOMPARE(s.curMemBytes, qint64(r.current.allocatedBytes));
    QCOMPARE(s.maxMemBytes, qint64(r.peak.allocatedBytes));
    QCOMPARE(s.timeMedianS, r.time.median);
    QCOMPARE(s.keptAlive.size(), qsizetype(r.keptAlive.size()));
    QVERIFY(s.predictedS > 0);
    QCOMPARE(s.predictedGpu, QString("NVIDIA H100 SXM (model)"));
    QCOMPARE(std::isnan(s.maxRelErr), device == DeviceKind::Meta);
  }
  QVERIFY(e.result("fused"));
  QVERIFY(!e.result("nope"));
}

void TestRunHistory::predictionIsOptional() {
  const StrategiesReport report = testing::runSmall({});
  const RunEntry e = runEntryFromReport(report, "x", nullptr);
  for (const StrategyResult& s : e.results) {
    QVERIFY(std::isnan(s.predictedS));
    QVERIFY(s.predictedGpu.isEmpty());
  }
}

void TestRunHistory::appendAssignsIdsAndSignals() {
  RunHistory h;
  QSignalSpy appended(&h, &RunHistory::appended);
  QSignalSpy reset(&h, &RunHistory::reset);
  RunEntry e;
  e.id = 99;  // replaced
  QCOMPARE(h.append(e), 0);
  QCOMPARE(h.append(e), 1);
  QCOMPARE(h.entries()[0].id, 1);
  QCOMPARE(h.entries()[1].id, 2);
  QCOMPARE(appended.size(), 2);
  QCOMPARE(appended[1][0].toInt(), 1);
  h.clear();
  QCOMPARE(h.size(), 0);
  QCOMPARE(reset.size(), 1);
  h.append(e);
  QCOMPARE(h.entries()[0].id, 1);
}

void TestRunHistory::jsonRoundTrip() {
  RunHistory h;
  h.append(runEntryFromReport(testing::runSmall({DeviceKind::Meta, true}), "meta a",
                              costmodel::findGpuProfile("a100")));
  RunEntry failed;
  failed.title = "failed";
  failed.ok = false;
  failed.error = "out of memory";
  StrategyResult r;
  r.strategy = "direct";
  r.ok = false;
  r.error = "CUDA out of memory. Tried to allocate 2.00 GiB";
  failed.results << r;
  h.append(failed);
  QTemporaryDir dir;
  const QString path = dir.filePath("history.json");
  QString error;
  QVERIFY2(h.save(path, &error), qPrintable(error));
  RunHistory loaded;
  QSignalSpy reset(&loaded, &RunHistory::reset);
  QVERIFY2(loaded.load(path, &error), qPrintable(error));
  QCOMPARE(reset.size(), 1);
  QCOMPARE(loaded.size(), 2);
  QCOMPARE(loaded.toJson(), h.toJson());
  const StrategyResult& back = loaded.entries()[1].results[0];
  QVERIFY(!back.ok);
  QCOMPARE(back.error, r.error);
  QVERIFY(std::isnan(back.timeMedianS));
  const RunEntry& first = loaded.entries()[0];
  QCOMPARE(first.results[0].maxMemBytes, h.entries()[0].results[0].maxMemBytes);
  QCOMPARE(first.results[0].keptAlive.size(), h.entries()[0].results[0].keptAlive.size());
  QCOMPARE(loaded.append(RunEntry{}), 2);
  QCOMPARE(loaded.entries()[2].id, 3);  // ids continue after the loaded ones
}

void TestRunHistory::malformedJsonIsRefused_data() {
  QTest::addColumn<QByteArray>("json");
  QTest::addColumn<QString>("message");
  QTest::newRow("not a history") << QByteArray(R"({"runs": []})") << "not a matmulviz run history";
  QTest::newRow("version") << QByteArray(R"({"format": "matmulviz-run-history", "version": 7})")
                           << "version 7";
  QTest::newRow("run without id")
      << QByteArray(
             R"({"format": "matmulviz-run-history", "version": 1, "runs": [{"results": []}]})")
      << "run 0 is malformed";
  // UBSan under tests/fuzz/fuzz_history: numbers beyond the integer types were converted unchecked.
  auto oneResult = [](const char* field) {
    return QByteArray(R"({"format": "matmulviz-run-history", "version": 1, "runs": [{"id": 1, )"
                      R"("results": [{"strategy": "direct", )") +
           field + "}]}]}";
  };
  QTest::newRow("bytes 1e300 (UBSan)")
      << oneResult(R"("cur_mem_bytes": 1e300)")
      << "run 0: field 'cur_mem_bytes' is 1e+300 (allowed: a whole number of bytes, 0 to "
         "9223372036854775807)";
  QTest::newRow("bytes negative") << oneResult(R"("max_mem_bytes": -1)")
                                  << "run 0: field 'max_mem_bytes' is -1";
  QTest::newRow("bytes fraction") << oneResult(R"("backward_max_mem_bytes": 0.5)")
                                  << "run 0: field 'backward_max_mem_bytes' is 0.5";
  QTest::newRow("bytes string") << oneResult(R"("max_mem_bytes": "many")")
                                << "run 0: field 'max_mem_bytes' is not a number";
  QTest::newRow("kept bytes 2^63")
      << oneResult(R"("kept_alive": [{"label": "c", "bytes": 9223372036854775808}])")
      << "run 0: field 'bytes' is 9.22337e+18";
  QTest::newRow("id INT_MAX (UBSan: the next id overflowed)")
      << QByteArray(R"({"format": "matmulviz-run-history", "version": 1, )"
                    R"("runs": [{"id": 2147483647, "results": []}]})")
      << "run 0: field 'id' is 2147483647 (allowed: a whole number, 1 to 2147483646)";
  QTest::newRow("id 1e300") << QByteArray(R"({"format": "matmulviz-run-history", "version": 1, )"
                                          R"("runs": [{"id": 1e300, "results": []}]})")
                            << "run 0: field 'id' is 1e+300";
  QTest::newRow("id zero") << QByteArray(R"({"format": "matmulviz-run-history", "version": 1, )"
                                         R"("runs": [{"id": 0, "results": []}]})")
                           << "run 0: field 'id' is 0";
}

void TestRunHistory::malformedJsonIsRefused() {
  QFETCH(QByteArray, json);
  QFETCH(QString, message);
  RunHistory h;
  h.append(RunEntry{});
  QString error;
  QVERIFY(!h.fromJson(QJsonDocument::fromJson(json), &error));
  QVERIFY2(error.contains(message), qPrintable(error));
  QCOMPARE(h.size(), 1);  // unchanged
}

void TestRunHistory::loadNamesTheFile() {
  QTemporaryDir dir;
  const QString path = dir.filePath("broken.json");
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write("{\"format\": ");
  f.close();
  RunHistory h;
  QString error;
  QVERIFY(!h.load(path, &error));
  QVERIFY2(error.startsWith(path), qPrintable(error));
  QVERIFY(!h.load(dir.filePath("missing.json"), &error));
  QVERIFY2(error.contains("missing.json"), qPrintable(error));
}

QTEST_GUILESS_MAIN(TestRunHistory)
#include "test_run_history.moc"
