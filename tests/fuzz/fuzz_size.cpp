// Fuzzes the size strings of the command line (core/util/parse_size.h): --device-memory's byte
// sizes ("1.5GiB") and whole numbers ("--n 4096"). Every failure must be a std::invalid_argument
// whose message starts with the argument's name; anything else is a finding.
#include "core/util/parse_size.h"

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace {

template <typename F>
void refusedWithName(F&& parse, const char* argName) {
  try {
    parse();
  } catch (const std::invalid_argument& e) {
    if (!std::string(e.what()).starts_with(argName)) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  refusedWithName(
      [&] {
        if (matmulviz::parseByteSize(text, "--device-memory") < 0) __builtin_trap();
      },
      "--device-memory");
  refusedWithName(
      [&] {
        if (matmulviz::parsePositiveInt(text, "--n") < 1) __builtin_trap();
      },
      "--n");
  refusedWithName(
      [&] {
        const int64_t v = matmulviz::parsePositiveInt(text, "--tpb", 1, 32);
        if (v < 1 || v > 32) __builtin_trap();
      },
      "--tpb");
  return 0;
}
