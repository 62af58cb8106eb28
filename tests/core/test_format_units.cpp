// formatSize, formatSeconds, formatRate and formatFactor: units, 3 significant digits, unit
// boundaries and values that are not finite.

#include "core/util/format_units.h"

#include <QtTest/QtTest>

#include <cmath>
#include <limits>

using namespace matmulviz;

class TestFormatUnits : public QObject {
  Q_OBJECT

 private slots:
  void size_data() {
    QTest::addColumn<qint64>("bytes");
    QTest::addColumn<QString>("text");
    QTest::newRow("zero") << qint64(0) << "0 B";
    QTest::newRow("bytes") << qint64(512) << "512 B";
    QTest::newRow("just under a KiB") << qint64(1023) << "1023 B";
    QTest::newRow("one KiB") << qint64(1024) << "1 KiB";
    QTest::newRow("3.5 KiB") << qint64(3584) << "3.5 KiB";
    QTest::newRow("small preset curMem") << qint64(2464153) << "2.35 MiB";
    QTest::newRow("forum curMem 96 MiB") << qint64(96) * 1024 * 1024 << "96 MiB";
    QTest::newRow("forum maxMem 160 MiB") << qint64(160) * 1024 * 1024 << "160 MiB";
    QTest::newRow("forum 2144 MiB") << qint64(2144) * 1024 * 1024 << "2.09 GiB";
    QTest::newRow("forum 2208 MiB") << qint64(2208) * 1024 * 1024 << "2.16 GiB";
    QTest::newRow("97.03 MiB") << qint64(101744640) << "97 MiB";
    QTest::newRow("12.3 MiB") << qint64(12897485) << "12.3 MiB";
    QTest::newRow("1023.9 KiB rounds to the next unit") << qint64(1048473) << "1 MiB";
    QTest::newRow("161390 MiB") << qint64(161390) * 1024 * 1024 << "158 GiB";
    QTest::newRow("TiB") << (qint64(3) << 40) << "3 TiB";
    QTest::newRow("int64 max") << std::numeric_limits<qint64>::max() << "8 EiB";
    QTest::newRow("negative") << qint64(-2048) << "-2 KiB";
  }
  void size() {
    QFETCH(qint64, bytes);
    QFETCH(QString, text);
    QCOMPARE(QString::fromStdString(formatSize(bytes)), text);
  }

  void seconds_data() {
    QTest::addColumn<double>("seconds");
    QTest::addColumn<QString>("text");
    QTest::newRow("zero") << 0.0 << "0 s";
    QTest::newRow("ns") << 41e-9 << "41.0 ns";
    QTest::newRow("sub-ns") << 0.25e-9 << "0.250 ns";
    QTest::newRow("3.59 us") << 3.586e-6 << "3.59 us";
    QTest::newRow("567 us") << 0.000567436 << "567 us";
    QTest::newRow("999.96 us rounds to ms") << 999.96e-6 << "1.00 ms";
    QTest::newRow("1.23 ms") << 1.234e-3 << "1.23 ms";
    QTest::newRow("45.6 ms") << 45.62e-3 << "45.6 ms";
    QTest::newRow("904 ms") << 0.9036 << "904 ms";
    QTest::newRow("2.34 s") << 2.34 << "2.34 s";
    QTest::newRow("minutes stay in s") << 1234.6 << "1235 s";
    QTest::newRow("NaN") << std::nan("") << "-";
    QTest::newRow("inf") << std::numeric_limits<double>::infinity() << "-";
  }
  void seconds() {
    QFETCH(double, seconds);
    QFETCH(QString, text);
    QCOMPARE(QString::fromStdString(formatSeconds(seconds)), text);
  }

  void rate_data() {
    QTest::addColumn<double>("perSecond");
    QTest::addColumn<QString>("text");
    QTest::newRow("zero") << 0.0 << "0 threads/s";
    QTest::newRow("plain") << 512.0 << "512 threads/s";
    QTest::newRow("k") << 1500.0 << "1.50 k threads/s";
    QTest::newRow("M") << 2.32739e6 << "2.33 M threads/s";
    QTest::newRow("999.6 k rounds to M") << 999.6e3 << "1.00 M threads/s";
    QTest::newRow("G") << 12.5e9 << "12.5 G threads/s";
    QTest::newRow("NaN") << std::nan("") << "-";
  }
  void rate() {
    QFETCH(double, perSecond);
    QFETCH(QString, text);
    QCOMPARE(QString::fromStdString(formatRate(perSecond, "threads")), text);
  }

  void factor_data() {
    QTest::addColumn<double>("ratio");
    QTest::addColumn<QString>("text");
    QTest::newRow("about 2") << 1.994 << "1.99x";
    QTest::newRow("tens") << 20.94 << "20.9x";
    QTest::newRow("hundreds") << 307.4 << "307x";
    QTest::newRow("no exponent") << 198765.0 << "199000x";
    QTest::newRow("thousands") << 1234.0 << "1230x";
    QTest::newRow("below 1") << 0.4567 << "0.457x";
    QTest::newRow("far below 1") << 0.006734 << "0.00673x";
    QTest::newRow("0.9996 rounds to 1") << 0.9996 << "1.00x";
    QTest::newRow("inf") << std::numeric_limits<double>::infinity() << "-";
  }
  void factor() {
    QFETCH(double, ratio);
    QFETCH(QString, text);
    QCOMPARE(QString::fromStdString(formatFactor(ratio)), text);
  }
};

QTEST_GUILESS_MAIN(TestFormatUnits)
#include "test_format_units.moc"
