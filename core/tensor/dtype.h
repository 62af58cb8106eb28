#pragma once
// Element types of the engine's tensors. float16/bfloat16 are storage formats: arithmetic
// accumulates in float32, as cuBLAS and PyTorch's CPU kernels do.

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace matmulviz {

enum class DType : uint8_t { Float32, Float16, BFloat16, Float64, Int64, Bool };

/// Bytes per element: 4, 2, 2, 8, 8, 1 (bool is one byte holding 0 or 1, as in PyTorch).
int64_t elementSize(DType t);
/// PyTorch's spelling: "float32", "float16", "bfloat16", "float64", "int64", "bool".
std::string_view dtypeName(DType t);
/// c10's ScalarType name, as PyTorch's error messages spell a dtype: "Float", "Half",
/// "BFloat16", "Double", "Long", "Bool".
std::string_view scalarTypeName(DType t);
/// Parses a PyTorch spelling (also "half", "float", "double", "bf16", "fp16", "fp32").
/// Throws std::invalid_argument naming the allowed values.
DType parseDType(std::string_view name);
/// False for int64 and bool.
bool isFloating(DType t);

/// IEEE 754 binary16 -> binary32, exact: every half value is a float (computed bit by bit).
float halfToFloatSlow(uint16_t h);
namespace detail {
/// halfToFloatSlow of every bit pattern (256 KiB), filled at start-up.
extern const float* const kHalfToFloat;
}  // namespace detail
/// IEEE 754 binary16 -> binary32 by table look-up (exact).
inline float halfToFloat(uint16_t h) {
  return detail::kHalfToFloat[h];
}
/// binary32 -> binary16, round to nearest even (as torch.half does).
uint16_t floatToHalf(float f);
/// bfloat16 <-> binary32, round to nearest even; NaN stays NaN.
inline float bfloat16ToFloat(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
inline uint16_t floatToBFloat16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

/// Reads element `i` of a buffer of type `t` as double / writes a double into it (converting;
/// to bool: true for any value other than 0, NaN included, as PyTorch's cast; any non-zero bool
/// byte reads as 1).
double loadAsDouble(const void* data, DType t, int64_t i);
void storeFromDouble(void* data, DType t, int64_t i, double v);

}  // namespace matmulviz
