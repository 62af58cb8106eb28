// Fuzzes einsum's equation parser and shape checks (core/ops/einsum.h), as
// `matmulviz-cli einsum EQUATION --shapes ...` reaches them. An input is up to three lines:
//   the equation            "bsnd,nde->bsne"
//   the operands' shapes    "2x3x4x5,4x5x6" (sizes capped at 4 and ranks at 6, so that every
//                           accepted product stays small; an empty shape is a 0-d tensor)
//   the operands' dtypes    "fh" (f float32, h float16, b bfloat16, d float64; default f)
// Every refusal must be a std::invalid_argument; anything else is a finding.
#include "core/memory/host_backing.h"
#include "core/ops/einsum.h"

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

using namespace matmulviz;

namespace {

std::vector<std::string_view> split(std::string_view s, char sep, size_t maxParts) {
  std::vector<std::string_view> parts;
  while (parts.size() + 1 < maxParts) {
    const size_t at = s.find(sep);
    if (at == std::string_view::npos) break;
    parts.push_back(s.substr(0, at));
    s.remove_prefix(at + 1);
  }
  parts.push_back(s);
  return parts;
}

Shape shapeOf(std::string_view text) {
  Shape sizes;
  if (text.empty()) return sizes;
  for (std::string_view dim : split(text, 'x', 6)) {
    int64_t v = 0;
    for (char c : dim)
      if (c >= '0' && c <= '9') v = v * 10 + (c - '0'), v = v > 4 ? 4 : v;
    sizes.push_back(v);
  }
  return sizes;
}

DType dtypeOf(char c) {
  switch (c) {
    case 'h':
      return DType::Float16;
    case 'b':
      return DType::BFloat16;
    case 'd':
      return DType::Float64;
    default:
      return DType::Float32;
  }
}

DevicePtr cpuDevice() {
  static HostBacking backing(int64_t{1} << 30);
  return std::make_shared<DeviceContext>(DeviceKind::Cpu, backing,
                                         CachingAllocator::Options{std::nullopt, true});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto lines = split(text, '\n', 3);
  const std::string equation(lines[0]);
  const std::string_view shapes = lines.size() > 1 ? lines[1] : std::string_view();
  const std::string_view dtypes = lines.size() > 2 ? lines[2] : std::string_view();
  const DevicePtr device = cpuDevice();
  std::vector<Tensor> operands;
  for (std::string_view s : split(shapes, ',', 4)) {
    const size_t index = operands.size();
    const DType dtype = dtypeOf(index < dtypes.size() ? dtypes[index] : 'f');
    Tensor t = empty(shapeOf(s), dtype, device, "operand" + std::to_string(index));
    for (int64_t e = 0; e < t.numel(); ++e)
      storeFromDouble(t.dataPtr(), dtype, e, static_cast<double>(e % 7) - 3);
    operands.push_back(std::move(t));
  }
  try {
    const Tensor out = einsum(equation, operands);
    (void)out.numel();
  } catch (const std::invalid_argument&) {
    // Refused with PyTorch's message.
  }
  return 0;
}
