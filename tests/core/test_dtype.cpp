// float16 / bfloat16 conversions: the look-up table against the bit-by-bit conversion for every
// pattern, and round trips through float32 (every half and bfloat16 value is a float). bool: one
// byte, PyTorch's name, and its conversions (any non-zero value, NaN included, is true).
#include "core/tensor/dtype.h"

#include <QtTest>

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

using namespace matmulviz;

namespace {
uint32_t bitsOf(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
}  // namespace

class TestDType : public QObject {
  Q_OBJECT

 private slots:
  void halfTableMatchesTheBitwiseConversion() {
    for (uint32_t h = 0; h < 65536; ++h) {
      const auto x = static_cast<uint16_t>(h);
      QCOMPARE(bitsOf(halfToFloat(x)), bitsOf(halfToFloatSlow(x)));
    }
  }

  void halfRoundTrips() {
    for (uint32_t h = 0; h < 65536; ++h) {
      const auto x = static_cast<uint16_t>(h);
      if (std::isnan(halfToFloat(x))) {
        QVERIFY(std::isnan(halfToFloat(floatToHalf(halfToFloat(x)))));
        continue;
      }
      QCOMPARE(floatToHalf(halfToFloat(x)), x);
    }
  }

  void bfloat16RoundTrips() {
    for (uint32_t b = 0; b < 65536; ++b) {
      const auto x = static_cast<uint16_t>(b);
      if (std::isnan(bfloat16ToFloat(x))) continue;
      QCOMPARE(floatToBFloat16(bfloat16ToFloat(x)), x);
    }
  }

  void roundToNearestEven_data() {
    QTest::addColumn<float>("value");
    QTest::addColumn<float>("half");
    QTest::newRow("1 + 2^-11 ties to 1 (even)") << 1.0f + std::ldexp(1.0f, -11) << 1.0f;
    QTest::newRow("1 + 3*2^-11 ties up to 1 + 2^-9")
        << 1.0f + 3 * std::ldexp(1.0f, -11) << 1.0f + std::ldexp(1.0f, -9);
    QTest::newRow("65520 overflows to inf") << 65520.0f << INFINITY;
    QTest::newRow("smallest subnormal") << std::ldexp(1.0f, -24) << std::ldexp(1.0f, -24);
  }
  void roundToNearestEven() {
    QFETCH(float, value);
    QFETCH(float, half);
    QCOMPARE(halfToFloat(floatToHalf(value)), half);
  }

  void boolIsOneByteNamedBool() {
    QCOMPARE(elementSize(DType::Bool), int64_t{1});
    QCOMPARE(dtypeName(DType::Bool), std::string_view("bool"));
    QCOMPARE(parseDType("bool"), DType::Bool);
    QVERIFY(!isFloating(DType::Bool));
    QVERIFY(!isFloating(DType::Int64));
    for (DType d : {DType::Float32, DType::Float16, DType::BFloat16, DType::Float64})
      QVERIFY(isFloating(d));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, parseDType("uint8"));
  }

  void boolStoresZeroOrOne_data() {
    QTest::addColumn<double>("value");
    QTest::addColumn<double>("stored");
    QTest::newRow("0") << 0.0 << 0.0;
    QTest::newRow("-0") << -0.0 << 0.0;
    QTest::newRow("-0.5") << -0.5 << 1.0;
    QTest::newRow("2") << 2.0 << 1.0;
    QTest::newRow("1e-300") << 1e-300 << 1.0;
    QTest::newRow("inf") << std::numeric_limits<double>::infinity() << 1.0;
    QTest::newRow("NaN") << std::numeric_limits<double>::quiet_NaN() << 1.0;
  }
  void boolStoresZeroOrOne() {
    QFETCH(double, value);
    QFETCH(double, stored);
    uint8_t bytes[3] = {7, 7, 7};
    storeFromDouble(bytes, DType::Bool, 1, value);
    QCOMPARE(bytes[0], uint8_t{7});  // one byte written, no more
    QCOMPARE(bytes[2], uint8_t{7});
    QCOMPARE(double(bytes[1]), stored);
    QCOMPARE(loadAsDouble(bytes, DType::Bool, 1), stored);
  }

  void boolReadsAnyNonZeroByteAsTrue() {
    const uint8_t bytes[4] = {0, 1, 2, 255};
    QCOMPARE(loadAsDouble(bytes, DType::Bool, 0), 0.0);
    for (int64_t i = 1; i < 4; ++i) QCOMPARE(loadAsDouble(bytes, DType::Bool, i), 1.0);
  }
};

QTEST_GUILESS_MAIN(TestDType)
#include "test_dtype.moc"
