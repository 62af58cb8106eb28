// parsePreset on bad presets: every number is range-checked before it is converted (a preset
// whose "n" is 1.31e41 was undefined behaviour, found by tests/fuzz/fuzz_preset), and every
// message names the file, the field and what is allowed. The embedded presets all parse.
#include "core/strategies/preset.h"
#include "core/strategies/requires_grad.h"
#include "core/util/bad_input.h"

#include <QtTest/QtTest>

#include <stdexcept>
#include <string>

using namespace matmulviz;

namespace {

/// The message of parsePreset's std::invalid_argument, or "" when it accepts `json`.
QString refusal(const QString& json) {
  try {
    parsePreset(json.toStdString(), "x", "x.json");
  } catch (const std::invalid_argument& e) {
    return QString::fromUtf8(e.what());
  }
  return {};
}

}  // namespace

class TestPreset : public QObject {
  Q_OBJECT

 private slots:
  void embeddedPresetsParse_data() {
    QTest::addColumn<QString>("name");
    for (const auto& p : embeddedPresets())
      QTest::newRow(p.name.c_str()) << QString::fromStdString(p.name);
  }
  void embeddedPresetsParse() {
    QFETCH(QString, name);
    const Preset p = loadPreset(name.toStdString());
    QCOMPARE(QString::fromStdString(p.name), name);
    p.config.workload.validate();
  }

  void goodValues_data() {
    QTest::addColumn<QString>("json");
    QTest::addColumn<qint64>("n");
    QTest::addColumn<int>("repeats");
    QTest::newRow("integers") << R"({"workload": {"n": 1000}, "repeats": 2})" << qint64(1000) << 2;
    QTest::newRow("whole float") << R"({"workload": {"n": 1e3}})" << qint64(1000) << 3;
    QTest::newRow("largest n") << R"({"workload": {"n": 2147483647, "j": 1, "k": 1}})"
                               << qint64(2147483647) << 3;
    QTest::newRow("largest n as a float")
        << R"({"workload": {"n": 2147483647.0, "j": 1, "k": 1}})" << qint64(2147483647) << 3;
    QTest::newRow("empty object") << "{}" << qint64(131072) << 3;
    QTest::newRow("unknown keys ignored")
        << R"({"colour": "red", "repeats": 1000})" << qint64(131072) << 1000;
  }
  void goodValues() {
    QFETCH(QString, json);
    QFETCH(qint64, n);
    QFETCH(int, repeats);
    const Preset p = parsePreset(json.toStdString(), "x", "x.json");
    QCOMPARE(p.config.workload.n, n);
    QCOMPARE(p.config.repeats, repeats);
  }

  // Each row: a bad preset and the message it must get, whole (or its start, for the rows
  // that end with the engine's own list of allowed values).
  void badPresets_data() {
    QTest::addColumn<QString>("json");
    QTest::addColumn<QString>("message");
    QTest::newRow("n 1.31e41 (fuzz finding)")
        << R"({"workload": {"n": 1.31e41}})"
        << "preset 'x.json': field 'n' is 1.31e+41 (allowed: 1 to 2147483647)";
    QTest::newRow("n beyond uint64")
        << R"({"workload": {"n": 18446744073709551616}})"
        << "preset 'x.json': field 'n' is 1.84467e+19 (allowed: 1 to 2147483647)";
    QTest::newRow("n uint64")
        << R"({"workload": {"n": 18446744073709551615}})"
        << "preset 'x.json': field 'n' is 18446744073709551615 (allowed: 1 to 2147483647)";
    QTest::newRow("m one past the limit")
        << R"({"workload": {"m": 2147483648}})"
        << "preset 'x.json': field 'm' is 2147483648 (allowed: 1 to 2147483647)";
    QTest::newRow("k negative") << R"({"workload": {"k": -5}})"
                                << "preset 'x.json': field 'k' is -5 (allowed: 1 to 2147483647)";
    QTest::newRow("batch zero") << R"({"workload": {"batch": 0}})"
                                << "preset 'x.json': field 'batch' is 0 (allowed: 1 to 2147483647)";
    QTest::newRow("i fraction")
        << R"({"workload": {"i": 2.5}})"
        << "preset 'x.json': field 'i' is 2.5, not a whole number (allowed: 1 to 2147483647)";
    QTest::newRow("j -1e300") << R"({"workload": {"j": -1e300}})"
                              << "preset 'x.json': field 'j' is -1e+300 (allowed: 1 to 2147483647)";
    QTest::newRow("n string (type_error.302)")
        << R"({"workload": {"n": "1000"}})"
        << "preset 'x.json': field 'n' must be a whole number (allowed: 1 to 2147483647), but is "
           "a string";
    QTest::newRow("n null") << R"({"workload": {"n": null}})"
                            << "preset 'x.json': field 'n' must be a whole number (allowed: 1 to "
                               "2147483647), but is null";
    QTest::newRow("repeats huge")
        << R"({"repeats": 1e10})"
        << "preset 'x.json': field 'repeats' is 1e+10 (allowed: 1 to 1000)";
    QTest::newRow("repeats bool")
        << R"({"repeats": true})"
        << "preset 'x.json': field 'repeats' must be a whole number (allowed: 1 to 1000), but is a "
           "boolean";
    QTest::newRow("backward number") << R"({"backward": 1})"
                                     << "preset 'x.json': field 'backward' must be true or false, "
                                        "but is a number";
    QTest::newRow("dtype number") << R"({"workload": {"dtype": 32}})"
                                  << "preset 'x.json': field 'dtype' must be a string, but is a "
                                     "number";
    QTest::newRow("dtype unknown") << R"({"workload": {"dtype": "float8"}})"
                                   << "preset 'x.json': field 'dtype' is refused: unknown dtype "
                                      "'float8'";
    QTest::newRow("device unknown") << R"({"device": "tpu"})"
                                    << "preset 'x.json': field 'device' is refused: unknown device "
                                       "'tpu'";
    QTest::newRow("requires_grad unknown")
        << R"({"requires_grad": "b"})"
        << "preset 'x.json': field 'requires_grad' is refused: 'b' is not allowed";
    QTest::newRow("strategies string")
        << R"({"strategies": "direct"})"
        << "preset 'x.json': field 'strategies' must be an array of strings, but is a string";
    QTest::newRow("strategies element")
        << R"({"strategies": ["direct", 3]})"
        << "preset 'x.json': field 'strategies' must be an array of strings, but element 1 is a "
           "number";
    QTest::newRow("strategies unknown") << R"({"strategies": ["slow"]})"
                                        << "preset 'x.json': field 'strategies' is refused:";
    QTest::newRow("workload array")
        << R"({"workload": [1, 2]})"
        << "preset 'x.json': field 'workload' must be a JSON object, but is an array";
    QTest::newRow("description number")
        << R"({"description": 7})"
        << "preset 'x.json': field 'description' must be a string, but is a number";
    QTest::newRow("top level array") << "[1, 2]"
                                     << "preset 'x.json': the file must be a JSON object, but is "
                                        "an array";
    QTest::newRow("top level number") << "5"
                                      << "preset 'x.json': the file must be a JSON object, but is "
                                         "a number";
    QTest::newRow("product too large")
        << R"({"workload": {"n": 2147483647, "i": 2147483647, "j": 2147483647}})"
        << "preset 'x.json': field 'workload' is refused: sizes: a [N, I, J] has too many elements";
    QTest::newRow("number beyond double (fuzz finding: out_of_range.406 escaped)")
        << "{\n  \"workload\": {\"n\": 1E1072}\n}"
        << "x.json:2: number overflow parsing '1E1072' (allowed: numbers within +-1.7e308)";
    QTest::newRow("syntax error names the line")
        << "{\n  \"workload\": {\"n\": 10,\n  \"oops\"\n}"
        << "x.json:4: parse error at line 4, column 1: syntax error";
  }
  void badPresets() {
    QFETCH(QString, json);
    QFETCH(QString, message);
    const QString got = refusal(json);
    QVERIFY2(got.startsWith(message), qPrintable("got: " + got));
    QVERIFY2(!got.contains("json.exception"), qPrintable(got));
  }
  /// RequiresGrad: every accepted spelling, its one canonical text and its JSON names.
  void requiresGradRoundTrip_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("a");
    QTest::addColumn<bool>("c");
    QTest::addColumn<QString>("canonical");
    QTest::addColumn<QStringList>("names");
    QTest::newRow("none") << "none" << false << false << "none" << QStringList{};
    QTest::newRow("empty") << "" << false << false << "none" << QStringList{};
    QTest::newRow("a") << "a" << true << false << "a" << QStringList{"a"};
    QTest::newRow("c") << "c" << false << true << "c" << QStringList{"c"};
    QTest::newRow("a,c") << "a,c" << true << true << "a,c" << QStringList{"a", "c"};
    QTest::newRow("c,a") << "c,a" << true << true << "a,c" << QStringList{"a", "c"};
  }
  void requiresGradRoundTrip() {
    QFETCH(QString, text);
    QFETCH(bool, a);
    QFETCH(bool, c);
    QFETCH(QString, canonical);
    QFETCH(QStringList, names);
    const RequiresGrad r = RequiresGrad::parse(text.toStdString());
    QCOMPARE(r.a, a);
    QCOMPARE(r.c, c);
    QCOMPARE(r.any(), a || c);
    QCOMPARE(QString::fromStdString(r.text()), canonical);
    QStringList got;
    for (const auto& n : r.names()) got << QString::fromStdString(n);
    QCOMPARE(got, names);
    QVERIFY(RequiresGrad::fromNames(r.names()) == r);
    QVERIFY(RequiresGrad::parse(r.text()) == r);
  }
  void requiresGradRefuses_data() {
    QTest::addColumn<QString>("text");
    QTest::newRow("b") << "b";
    QTest::newRow("upper") << "A";
    QTest::newRow("space") << "a, c";
    QTest::newRow("twice") << "a,a";
  }
  void requiresGradRefuses() {
    QFETCH(QString, text);
    try {
      RequiresGrad::parse(text.toStdString());
      QFAIL("accepted");
    } catch (const BadInput& e) {
      QCOMPARE(QString::fromStdString(e.field()), QString("requires_grad"));
      QCOMPARE(QString::fromStdString(e.allowed()), QString("none, a, c, a,c"));
      QCOMPARE(QString::fromStdString(e.value()), text);
    }
  }
  void requiresGradFromNamesRefuses() {
    QVERIFY_THROWS_EXCEPTION(BadInput, RequiresGrad::fromNames({"a", "a"}));
    QVERIFY_THROWS_EXCEPTION(BadInput, RequiresGrad::fromNames({"q"}));
  }
};

QTEST_GUILESS_MAIN(TestPreset)
#include "test_preset.moc"
