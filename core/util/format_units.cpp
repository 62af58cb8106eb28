#include "core/util/format_units.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace matmulviz {

namespace {

/// `v` (>= 0) with 3 significant digits, fixed-point (never an exponent): 3.586 -> "3.59",
/// 56.7 -> "56.7", 567.4 -> "567", 12345 -> "12345", 0.006734 -> "0.00673". With `trim`,
/// trailing zeros after the point go ("3.50" -> "3.5", "96.0" -> "96").
std::string threeDigits(double v, bool trim) {
  int decimals = v < 9.995 ? 2 : v < 99.95 ? 1 : 0;
  if (v > 0 && v < 0.9995)  // 3 significant digits below 1, as far as 1e-12
    decimals = std::min(14, 2 - static_cast<int>(std::floor(std::log10(v * 1.0005))));
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string s = buf;
  if (trim && s.find('.') != std::string::npos) {
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

}  // namespace

std::string formatSize(int64_t bytes) {
  if (bytes < 0) return "-" + formatSize(bytes == INT64_MIN ? INT64_MAX : -bytes);
  if (bytes < 1024) return std::to_string(bytes) + " B";
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes) / 1024.0;
  int unit = 0;
  while (v >= 1023.5 && unit < 5) {  // 1023.5 would print as "1024": the next unit reads better
    v /= 1024.0;
    ++unit;
  }
  return threeDigits(v, true) + " " + kUnits[unit];
}

std::string formatSeconds(double seconds) {
  if (!std::isfinite(seconds)) return "-";
  if (seconds == 0) return "0 s";
  const double a = std::abs(seconds);
  const char* sign = seconds < 0 ? "-" : "";
  if (a >= 0.9995) return sign + threeDigits(a, false) + " s";
  if (a >= 0.9995e-3) return sign + threeDigits(a * 1e3, false) + " ms";
  if (a >= 0.9995e-6) return sign + threeDigits(a * 1e6, false) + " us";
  return sign + threeDigits(a * 1e9, false) + " ns";
}

std::string formatRate(double perSecond, const std::string& what) {
  if (!std::isfinite(perSecond)) return "-";
  if (perSecond == 0) return "0 " + what + "/s";
  static constexpr const char* kPrefixes[] = {"", "k ", "M ", "G ", "T "};
  double v = std::abs(perSecond);
  int prefix = 0;
  while (v >= 999.5 && prefix < 4) {
    v /= 1000.0;
    ++prefix;
  }
  return (perSecond < 0 ? "-" : "") + threeDigits(v, false) + " " + kPrefixes[prefix] + what + "/s";
}

std::string formatFactor(double ratio) {
  if (!std::isfinite(ratio)) return "-";
  const double a = std::abs(ratio);
  std::string digits;
  if (a < 999.5) {
    digits = threeDigits(a, false);
  } else {
    const double scale = std::pow(10.0, std::floor(std::log10(a)) - 2);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.0f", std::round(a / scale) * scale);
    digits = buf;
  }
  return (ratio < 0 ? "-" : "") + digits + "x";
}

}  // namespace matmulviz
