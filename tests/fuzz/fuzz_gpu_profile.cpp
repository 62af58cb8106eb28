// Fuzzes the GPU profile parser (core/costmodel/profile_file.h, what `--model FILE` reads): any
// bytes as a profile file's text. Every failure must be a std::invalid_argument naming the file;
// an accepted profile must give finite, positive predictions.
#include "core/costmodel/cost_model.h"
#include "core/costmodel/profile_file.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const matmulviz::costmodel::GpuProfile p =
        matmulviz::costmodel::parseGpuProfile(text, "fuzz.json");
    for (const char* s : {"strategy1", "strategy3", "direct", "fused"}) {
      const double t = matmulviz::costmodel::predictStrategy(s, {}, p).totalS;
      if (!std::isfinite(t) || t <= 0) __builtin_trap();
    }
    if (matmulviz::costmodel::parseGpuProfile(matmulviz::costmodel::gpuProfileJson(p), "again")
            .bandwidthBytesPerS != p.bandwidthBytesPerS)
      __builtin_trap();
  } catch (const std::invalid_argument& e) {
    if (std::string(e.what()).find("fuzz.json") == std::string::npos) __builtin_trap();
  }
  return 0;
}
