// parseByteSize and parsePositiveInt: accepted forms, values, and the errors' wording.

#include "core/util/parse_size.h"

#include <QtTest/QtTest>

#include <limits>
#include <stdexcept>
#include <string>

using namespace matmulviz;

class TestParseSize : public QObject {
  Q_OBJECT

 private slots:
  void byteSize_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<qint64>("bytes");
    QTest::newRow("plain bytes") << "1048576" << qint64(1048576);
    QTest::newRow("zero") << "0" << qint64(0);
    QTest::newRow("B") << "512B" << qint64(512);
    QTest::newRow("KiB") << "64KiB" << qint64(64 * 1024);
    QTest::newRow("MiB") << "512MiB" << qint64(512) * 1024 * 1024;
    QTest::newRow("GiB") << "1GiB" << (qint64(1) << 30);
    QTest::newRow("TiB") << "2TiB" << (qint64(2) << 40);
    QTest::newRow("fraction GiB") << "1.5GiB" << qint64(1610612736);
    QTest::newRow("fraction rounds down") << "0.1KiB" << qint64(102);
    QTest::newRow("leading dot") << ".5KiB" << qint64(512);
    QTest::newRow("GB decimal") << "2GB" << qint64(2000000000);
    QTest::newRow("KB decimal") << "3KB" << qint64(3000);
    QTest::newRow("TB decimal") << "1TB" << qint64(1000000000000);
    QTest::newRow("G binary") << "1G" << (qint64(1) << 30);
    QTest::newRow("M binary") << "1M" << (qint64(1) << 20);
    QTest::newRow("K binary") << "1K" << qint64(1024);
    QTest::newRow("lower case") << "1gib" << (qint64(1) << 30);
    QTest::newRow("upper case") << "1GIB" << (qint64(1) << 30);
    QTest::newRow("lower decimal") << "2gb" << qint64(2000000000);
    QTest::newRow("space") << "512 MiB" << qint64(512) * 1024 * 1024;
    QTest::newRow("int64 max") << "9223372036854775807" << std::numeric_limits<qint64>::max();
    QTest::newRow("7 EiB in TiB") << "7340032TiB" << (qint64(7) << 60);
  }
  void byteSize() {
    QFETCH(QString, text);
    QFETCH(qint64, bytes);
    QCOMPARE(parseByteSize(text.toStdString(), "--max-memory"), bytes);
  }

  void byteSizeErrors_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("why");
    QTest::newRow("empty") << ""
                           << "is empty";
    QTest::newRow("unknown unit") << "12x"
                                  << "unknown unit 'x'";
    QTest::newRow("negative") << "-1GiB"
                              << "has a sign";
    QTest::newRow("plus") << "+1GiB"
                          << "has a sign";
    QTest::newRow("unit only") << "GiB"
                               << "does not start with a number";
    QTest::newRow("two dots") << "1.2.3GB"
                              << "is not a valid number";
    QTest::newRow("dot only") << ".GiB"
                              << "does not start with a number";
    QTest::newRow("exponent") << "1e9"
                              << "unknown unit 'e9'";
    QTest::newRow("two spaces") << "1  GiB"
                                << "unknown unit";
    QTest::newRow("int64 max + 1") << "9223372036854775808"
                                   << "too large";
    QTest::newRow("huge digits") << "99999999999999999999999999"
                                 << "too large";
    QTest::newRow("8 EiB") << "8388608TiB"
                           << "too large";
    QTest::newRow("10 EB") << "10000000TB"
                           << "too large";
    QTest::newRow("leading space") << " 1GiB"
                                   << "does not start with a number";
  }
  void byteSizeErrors() {
    QFETCH(QString, text);
    QFETCH(QString, why);
    try {
      parseByteSize(text.toStdString(), "--max-memory");
      QFAIL("no exception");
    } catch (const std::invalid_argument& e) {
      const QString msg = QString::fromStdString(e.what());
      QVERIFY2(msg.startsWith("--max-memory: '" + text + "'"), e.what());
      QVERIFY2(msg.contains(why), e.what());
      QVERIFY2(msg.contains("1.5GiB") && msg.contains("2GB") && msg.contains("1048576"), e.what());
    }
  }

  void positiveInt_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<qint64>("minValue");
    QTest::addColumn<qint64>("maxValue");
    QTest::addColumn<qint64>("value");
    const qint64 max = std::numeric_limits<qint64>::max();
    QTest::newRow("one") << "1" << qint64(1) << max << qint64(1);
    QTest::newRow("not a tile multiple") << "1000" << qint64(1) << max << qint64(1000);
    QTest::newRow("leading zeros") << "007" << qint64(1) << max << qint64(7);
    QTest::newRow("zero allowed") << "0" << qint64(0) << max << qint64(0);
    QTest::newRow("at max") << "64" << qint64(1) << qint64(64) << qint64(64);
    QTest::newRow("int64 max") << "9223372036854775807" << qint64(1) << max << max;
  }
  void positiveInt() {
    QFETCH(QString, text);
    QFETCH(qint64, minValue);
    QFETCH(qint64, maxValue);
    QFETCH(qint64, value);
    QCOMPARE(parsePositiveInt(text.toStdString(), "--n", minValue, maxValue), value);
  }

  void positiveIntErrors_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<qint64>("maxValue");
    QTest::addColumn<QString>("message");
    const qint64 max = std::numeric_limits<qint64>::max();
    const QString notWhole = "is not a whole number (allowed: 1 to 9223372036854775807)";
    const QString range = "is out of range (allowed: 1 to 9223372036854775807)";
    QTest::newRow("suffix") << "12x" << max << "--n: '12x' " + notWhole;
    QTest::newRow("empty") << "" << max << "--n: '' is empty (allowed: 1 to 9223372036854775807)";
    const QString allowed = " (allowed: 1 to 9223372036854775807)";
    const QString digitsOnly =
        "is not written in digits only (no sign, exponent or decimal point): write ";
    QTest::newRow("negative") << "-3" << max << "--n: '-3' is negative" + allowed;
    QTest::newRow("negative fraction") << "-0.5" << max << "--n: '-0.5' is negative" + allowed;
    QTest::newRow("plus") << "+3" << max << "--n: '+3' " + digitsOnly + "3" + allowed;
    QTest::newRow("exponent") << "1e3" << max << "--n: '1e3' " + digitsOnly + "1000" + allowed;
    QTest::newRow("whole with a point")
        << "2.0" << max << "--n: '2.0' " + digitsOnly + "2" + allowed;
    QTest::newRow("fraction") << "1.5" << max << "--n: '1.5' " + notWhole;
    QTest::newRow("space") << " 3" << max
                           << "--n: ' 3' holds a space: write the digits only" + allowed;
    QTest::newRow("empty word") << "many" << max << "--n: 'many' " + notWhole;
    QTest::newRow("zero") << "0" << max << "--n: '0' " + range;
    QTest::newRow("overflow") << "9223372036854775808" << max
                              << "--n: '9223372036854775808' " + range;
    QTest::newRow("above max") << "65" << qint64(64)
                               << "--n: '65' is out of range (allowed: 1 to 64)";
  }
  void positiveIntErrors() {
    QFETCH(QString, text);
    QFETCH(qint64, maxValue);
    QFETCH(QString, message);
    try {
      parsePositiveInt(text.toStdString(), "--n", 1, maxValue);
      QFAIL("no exception");
    } catch (const std::invalid_argument& e) {
      QCOMPARE(QString::fromStdString(e.what()), message);
    }
  }
};

QTEST_GUILESS_MAIN(TestParseSize)
#include "test_parse_size.moc"
