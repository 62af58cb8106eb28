// Scenario::fromJson, which restores the scenario panel from the app's settings: a saved
// scenario round-trips, and a bad one is refused with a std::invalid_argument naming the field
// (never converted unchecked: device_memory_bytes 1e300 was undefined behaviour, caught by
// tests/fuzz/fuzz_scenario).
#include "ui/models/scenario.h"

#include <QJsonDocument>
#include <QtTest/QtTest>

#include <stdexcept>

using namespace matmulviz;
using namespace matmulviz::ui;

class TestScenario : public QObject {
  Q_OBJECT

 private slots:
  void roundTrip() {
    Scenario s = Scenario::fromPreset(loadPreset("small"));
    s.config.deviceMemoryBytes = int64_t{3} << 30;
    const Scenario back = Scenario::fromJson(s.toJson());
    QCOMPARE(back.toJson(), s.toJson());
    QCOMPARE(*back.config.deviceMemoryBytes, int64_t{3} << 30);
  }

  void badScenarios_data() {
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("message");
    QTest::newRow("device_memory_bytes 1e300 (UBSan)")
        << QByteArray(R"({"device_memory_bytes": 1e300})")
        << "device_memory_bytes: must be a whole number of bytes in [0, 9223372036854775807]";
    QTest::newRow("device_memory_bytes 2^63") << QByteArray(R"({"device_memory_bytes": 9.3e18})")
                                              << "device_memory_bytes: must be a whole number";
    QTest::newRow("device_memory_bytes negative")
        << QByteArray(R"({"device_memory_bytes": -1})") << "device_memory_bytes: must be";
    QTest::newRow("device_memory_bytes fraction")
        << QByteArray(R"({"device_memory_bytes": 1.5})") << "device_memory_bytes: must be";
    QTest::newRow("device_memory_bytes string")
        << QByteArray(R"({"device_memory_bytes": "1GiB"})") << "device_memory_bytes: must be";
    QTest::newRow("n 1e300") << QByteArray(R"({"workload": {"n": 1e300}})")
                             << "n: must be an integer in [1, 1073741824]";
    QTest::newRow("tpb 33") << QByteArray(R"({"kernel": {"tpb": 33}})")
                            << "tpb: must be an integer in [1, 32]";
    QTest::newRow("repeats string")
        << QByteArray(R"({"repeats": "3"})") << "repeats: must be an integer in [1, 100]";
  }
  void badScenarios() {
    QFETCH(QByteArray, json);
    QFETCH(QString, message);
    try {
      Scenario::fromJson(QJsonDocument::fromJson(json).object());
      QFAIL("accepted");
    } catch (const std::invalid_argument& e) {
      QVERIFY2(QString::fromUtf8(e.what()).startsWith(message), e.what());
    }
  }
};

QTEST_GUILESS_MAIN(TestScenario)
#include "test_scenario.moc"
