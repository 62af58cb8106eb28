// `matmulviz-cli ladder` end to end: the JSON report at a small size, and exit code 2 with a
// message naming the argument for bad input.
#include "tests/common/cli_process.h"

#include <QRegularExpression>
#include <QtTest>

#include <nlohmann/json.hpp>

namespace {

using Result = matmulviz::testing::CliResult;

Result runCli(const QStringList& args) {
  return matmulviz::testing::runCliProcess(QStringLiteral(MATMULVIZ_CLI),
                                           QStringList{"ladder"} + args);
}

}  // namespace

class TestLadderCli : public QObject {
  Q_OBJECT
 private slots:
  void smallJson() {
    const Result r = runCli(
        {"--m", "37", "--k", "21", "--n", "10", "--tpb", "8", "--repeats", "1", "--json", "-"});
    QCOMPARE(r.exitCode, 0);
    const nlohmann::json j = nlohmann::json::parse(r.out.toStdString());
    QCOMPARE(j["workload"]["m"].get<int>(), 37);
    QCOMPARE(j["flops"].get<double>(), 2.0 * 37 * 21 * 10);
    QCOMPARE(j["rungs"].size(), std::size_t(8));
    QCOMPARE(j["rungs"][0]["name"].get<std::string>(), std::string("simulated"));
    QVERIFY(j["rungs"][0]["speedup"].is_null());
    for (const auto& rung : j["rungs"]) {
      if (!rung["ok"].get<bool>()) {
        QVERIFY(rung["skipped"].is_string());
        continue;
      }
      QVERIFY(rung["max_rel_err"].get<double>() < 1e-5);
      QVERIFY(rung["time_s"].get<double>() > 0);
    }
  }

  // Tiny sizes: times in ns or us with 3 digits (never "0.0 us"), speed-ups without exponents.
  void tinyTextHasUnits() {
    const Result r = runCli({"--m", "1", "--k", "1", "--n", "1", "--tpb", "1", "--repeats", "1"});
    QCOMPARE(r.exitCode, 0);
    const QString out = QString::fromUtf8(r.out);
    QVERIFY2(!out.contains(QStringLiteral(" 0.0 us")), qPrintable(out));
    QVERIFY2(!out.contains(QStringLiteral("e+")), qPrintable(out));
    QVERIFY2(out.contains(QRegularExpression(QStringLiteral("\\nblas +[0-9.]+ (ns|us) "))),
             qPrintable(out));
  }

  // A 1x1 product's rungs take nanoseconds to microseconds: each time keeps three significant
  // digits in its unit (never "0.0 us"), each speed-up is a plain number (never "1.99e+05x").
  void tinySizesKeepTheirPrecision_data() {
    QTest::addColumn<QStringList>("sizes");
    QTest::addRow("1x1x1") << QStringList{"--m", "1", "--k", "1", "--n", "1"};
    QTest::addRow("3x2x5") << QStringList{"--m", "3", "--k", "2", "--n", "5"};
  }
  void tinySizesKeepTheirPrecision() {
    QFETCH(QStringList, sizes);
    const Result r = runCli(sizes + QStringList{"--repeats", "3"});
    QCOMPARE(r.exitCode, 0);
    const QString out = QString::fromUtf8(r.out);
    const QRegularExpression time(QStringLiteral("^(\\w+)\\s+(\\d+(?:\\.\\d+)?) (s|ms|us|ns)\\s"));
    int rungs = 0;
    for (const QString& line : out.split('\n')) {
      const auto m = time.match(line);
      if (!m.hasMatch()) continue;
      ++rungs;
      QVERIFY2(m.captured(2).toDouble() > 0, qPrintable(line));
      const QString digits = QString(m.captured(2)).remove('.');
      QVERIFY2(digits.size() >= 3 || m.captured(2).toDouble() >= 100, qPrintable(line));
      QVERIFY2(!line.contains(QRegularExpression("e[+-]\\d+x")), qPrintable(line));
    }
    QVERIFY2(rungs >= 4, qPrintable(out));  // simulated, loop, einsum, blas
  }

  void badInput_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("mentions");
    QTest::addRow("m 0") << QStringList{"--m", "0"} << "--m";
    QTest::addRow("n 0") << QStringList{"--n", "0"} << "--n";
    QTest::addRow("k not a number") << QStringList{"--k", "many"} << "--k";
    QTest::addRow("tpb 0") << QStringList{"--tpb", "0"} << "--tpb";
    QTest::addRow("tpb 33") << QStringList{"--tpb", "33"} << "--tpb";
    QTest::addRow("tpb 1.5") << QStringList{"--tpb", "1.5"}
                             << "--tpb: '1.5' is not a whole number (allowed: 1 to 32)";
    QTest::addRow("repeats 0") << QStringList{"--repeats", "0"} << "--repeats";
    QTest::addRow("json in missing dir")
        << QStringList{"--m", "5", "--json", "/nonexistent/dir/x.json"} << "--json";
  }
  void badInput() {
    QFETCH(QStringList, args);
    QFETCH(QString, mentions);
    const Result r = runCli(args);
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(QString::fromUtf8(r.err).contains(mentions), r.err.constData());
  }
};

QTEST_GUILESS_MAIN(TestLadderCli)
#include "test_ladder_cli.moc"
