#include "core/tensor/dtype.h"

#include <cmath>
#include <stdexcept>

namespace matmulviz {

int64_t elementSize(DType t) {
  switch (t) {
    case DType::Float32:
      return 4;
    case DType::Float16:
    case DType::BFloat16:
      return 2;
    case DType::Float64:
    case DType::Int64:
      return 8;
    case DType::Bool:
      return 1;
  }
  return 0;
}

std::string_view dtypeName(DType t) {
  switch (t) {
    case DType::Float32:
      return "float32";
    case DType::Float16:
      return "float16";
    case DType::BFloat16:
      return "bfloat16";
    case DType::Float64:
      return "float64";
    case DType::Int64:
      return "int64";
    case DType::Bool:
      return "bool";
  }
  return "?";
}

std::string_view scalarTypeName(DType t) {
  switch (t) {
    case DType::Float32:
      return "Float";
    case DType::Float16:
      return "Half";
    case DType::BFloat16:
      return "BFloat16";
    case DType::Float64:
      return "Double";
    case DType::Int64:
      return "Long";
    case DType::Bool:
      return "Bool";
  }
  return "?";
}

DType parseDType(std::string_view s) {
  if (s == "float32" || s == "float" || s == "fp32") return DType::Float32;
  if (s == "float16" || s == "half" || s == "fp16") return DType::Float16;
  if (s == "bfloat16" || s == "bf16") return DType::BFloat16;
  if (s == "float64" || s == "double") return DType::Float64;
  if (s == "int64" || s == "long") return DType::Int64;
  if (s == "bool") return DType::Bool;
  throw std::invalid_argument("unknown dtype '" + std::string(s) +
                              "' (allowed: float32, float16, bfloat16)");
}

bool isFloating(DType t) {
  return t != DType::Int64 && t != DType::Bool;
}

float halfToFloatSlow(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      bits = sign | static_cast<uint32_t>(127 - 15 - e) << 23 | (mant & 0x3ffu) << 13;
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | mant << 13;
  } else {
    bits = sign | (exp + 127 - 15) << 23 | mant << 13;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

namespace detail {
namespace {
const float* buildHalfTable() {
  static float table[65536];
  for (uint32_t h = 0; h < 65536; ++h) table[h] = halfToFloatSlow(static_cast<uint16_t>(h));
  return table;
}
}  // namespace
const float* const kHalfToFloat = buildHalfTable();
}  // namespace detail

uint16_t floatToHalf(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t absBits = bits & 0x7fffffffu;
  if (absBits > 0x7f800000u) return sign | 0x7e00u;   // NaN
  if (absBits >= 0x477ff000u) return sign | 0x7c00u;  // rounds to inf
  if (absBits < 0x38800000u) {                        // subnormal or zero in half
    // value = absBits as float; half subnormal unit is 2^-24
    float a;
    std::memcpy(&a, &absBits, 4);
    const float scaled = a * 16777216.0f;  // / 2^-24
    const auto m = static_cast<uint32_t>(std::nearbyint(scaled));
    return static_cast<uint16_t>(sign | m);
  }
  const uint32_t exp = ((absBits >> 23) - 127 + 15);
  uint32_t mant = absBits & 0x7fffffu;
  uint32_t h = exp << 10 | mant >> 13;
  const uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // carries into exp correctly
  return static_cast<uint16_t>(sign | h);
}

double loadAsDouble(const void* data, DType t, int64_t i) {
  switch (t) {
    case DType::Float32:
      return static_cast<const float*>(data)[i];
    case DType::Float16:
      return halfToFloat(static_cast<const uint16_t*>(data)[i]);
    case DType::BFloat16:
      return bfloat16ToFloat(static_cast<const uint16_t*>(data)[i]);
    case DType::Float64:
      return static_cast<const double*>(data)[i];
    case DType::Int64:
      return static_cast<double>(static_cast<const int64_t*>(data)[i]);
    case DType::Bool:
      return static_cast<const uint8_t*>(data)[i] != 0 ? 1.0 : 0.0;
  }
  return 0;
}

void storeFromDouble(void* data, DType t, int64_t i, double v) {
  switch (t) {
    case DType::Float32:
      static_cast<float*>(data)[i] = static_cast<float>(v);
      return;
    case DType::Float16:
      static_cast<uint16_t*>(data)[i] = floatToHalf(static_cast<float>(v));
      return;
    case DType::BFloat16:
      static_cast<uint16_t*>(data)[i] = floatToBFloat16(static_cast<float>(v));
      return;
    case DType::Float64:
      static_cast<double*>(data)[i] = v;
      return;
    case DType::Int64:
      static_cast<int64_t*>(data)[i] = static_cast<int64_t>(v);
      return;
    case DType::Bool:
      static_cast<uint8_t*>(data)[i] = v != 0 ? 1 : 0;  // NaN != 0: true, as bool(nan)
      return;
  }
}

}  // namespace matmulviz
