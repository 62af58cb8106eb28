#include "core/util/parse_size.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace matmulviz {

namespace {

// Exact arithmetic for whole * unit + fraction * unit (both below 2^63 * 2^40).
__extension__ typedef unsigned __int128 Uint128;

constexpr const char* kByteSizeForms =
    "accepted: a number of bytes such as 1048576, or a number and a unit such as 64KiB, "
    "512MiB, 1.5GiB (binary: B, KiB, MiB, GiB, TiB, also K, M, G, T) or 2GB (decimal: KB, MB, "
    "GB, TB); units are case-insensitive";

[[noreturn]] void badSize(const std::string& text, const std::string& argName,
                          const std::string& why) {
  throw std::invalid_argument(argName + ": '" + text + "' " + why + " (" + kByteSizeForms + ")");
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Bytes per unit, 0 for an unknown unit.
int64_t unitBytes(const std::string& unit) {
  const std::string u = lower(unit);
  if (u.empty() || u == "b") return 1;
  static constexpr char kPrefixes[] = "kmgt";
  for (int i = 0; i < 4; ++i) {
    const std::string p(1, kPrefixes[i]);
    int64_t binary = int64_t{1} << (10 * (i + 1)), decimal = 1;
    for (int j = 0; j <= i; ++j) decimal *= 1000;
    if (u == p || u == p + "ib") return binary;
    if (u == p + "b") return decimal;
  }
  return 0;
}

bool isDigit(char c) {
  return c >= '0' && c <= '9';
}

/// Why `text` (not all digits) is not accepted as a whole number, in words a person can act on.
std::string whyNotDigits(const std::string& text) {
  if (text.empty()) return "is empty";
  if (text.find_first_of(" \t\n") != std::string::npos)
    return "holds a space: write the digits only";
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(v)) return "is not a whole number";
  if (text[0] == '-') return "is negative";
  if (v != std::floor(v)) return "is not a whole number";
  if (v > 9.2e18) return "is out of range";
  char digits[32];
  std::snprintf(digits, sizeof digits, "%.0f", v);
  return "is not written in digits only (no sign, exponent or decimal point): write " +
         std::string(digits);
}

}  // namespace

int64_t parseByteSize(const std::string& text, const std::string& argName) {
  if (text.empty()) badSize(text, argName, "is empty");
  size_t pos = 0;
  Uint128 whole = 0, frac = 0, fracScale = 1;
  bool digits = false, tooLarge = false;
  for (; pos < text.size() && isDigit(text[pos]); ++pos, digits = true) {
    whole = whole * 10 + static_cast<unsigned>(text[pos] - '0');
    if (whole > static_cast<Uint128>(INT64_MAX)) tooLarge = true, whole = INT64_MAX;
  }
  if (pos < text.size() && text[pos] == '.') {
    for (++pos; pos < text.size() && isDigit(text[pos]); ++pos, digits = true) {
      if (fracScale >= 1'000'000'000'000'000'000ull) continue;  // beyond 1e-18: no effect
      frac = frac * 10 + static_cast<unsigned>(text[pos] - '0');
      fracScale *= 10;
    }
  }
  if (!digits) {
    badSize(text, argName,
            !text.empty() && (text[0] == '-' || text[0] == '+') ? "has a sign"
                                                                : "does not start with a number");
  }
  if (pos < text.size() && (text[pos] == '.' || isDigit(text[pos])))
    badSize(text, argName, "is not a valid number");
  const size_t unitStart = pos < text.size() && text[pos] == ' ' ? pos + 1 : pos;
  const int64_t unit = unitBytes(text.substr(unitStart));
  if (unit == 0) badSize(text, argName, "has an unknown unit '" + text.substr(pos) + "'");
  const Uint128 bytes = whole * unit + frac * unit / fracScale;
  if (tooLarge || bytes > static_cast<Uint128>(INT64_MAX))
    badSize(text, argName, "is too large (at most 9223372036854775807 bytes, 8 EiB)");
  return static_cast<int64_t>(bytes);
}

int64_t parsePositiveInt(const std::string& text, const std::string& argName, int64_t minValue,
                         int64_t maxValue) {
  const std::string allowed =
      " (allowed: " + std::to_string(minValue) + " to " + std::to_string(maxValue) + ")";
  bool digitsOnly = !text.empty();
  for (char c : text) digitsOnly = digitsOnly && isDigit(c);
  if (!digitsOnly)
    throw std::invalid_argument(argName + ": '" + text + "' " + whyNotDigits(text) + allowed);
  bool overflow = false;
  int64_t v = 0;
  for (char c : text)
    overflow =
        overflow || __builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, c - '0', &v);
  if (overflow || v < minValue || v > maxValue)
    throw std::invalid_argument(argName + ": '" + text + "' is out of range" + allowed);
  return v;
}

}  // namespace matmulviz
