// Fuzzes the preset parser (core/strategies/preset.h): any bytes as a preset file's text.
// Every failure must be a std::invalid_argument naming the file; anything else is a finding.
#include "core/strategies/preset.h"

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const matmulviz::Preset p = matmulviz::parsePreset(text, "fuzz", "fuzz.json");
    p.config.workload.validate();
  } catch (const std::invalid_argument& e) {
    if (std::string(e.what()).find("fuzz.json") == std::string::npos) __builtin_trap();
  }
  return 0;
}
