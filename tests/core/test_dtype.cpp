// float16 / bfloat16 conversions: the look-up table against the bit-by-bit conversion for every
// pattern, and round trips through float32 (every half and bfloat16 value is a float).
#include "core/tensor/dtype.h"

#include <QtTest>

#include <cmath>
#include <cstring>

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
};

QTEST_GUILESS_MAIN(TestDType)
#include "test_dtype.moc"
