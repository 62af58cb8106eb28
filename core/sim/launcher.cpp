#include "core/sim/launcher.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>

namespace matmulviz::sim {
namespace detail {

LaunchReport runLaunch(const LaunchConfig& config, std::vector<ArrayInfo> arrays,
                       const LaunchOptions& options, BlockRunner::ThreadEntry plain,
                       BlockRunner::ThreadEntry traced, void* body) {
  validate(config);
  LaunchReport report;
  report.kernel = options.kernel;
  report.config = config;
  report.arrays = std::move(arrays);
  report.traced = options.trace;
  const std::uint64_t blocks = config.blocks();
  std::vector<std::uint64_t> traceBlocks = options.traceBlocks;
  std::sort(traceBlocks.begin(), traceBlocks.end());
  traceBlocks.erase(std::unique(traceBlocks.begin(), traceBlocks.end()), traceBlocks.end());
  if (!traceBlocks.empty() && traceBlocks.back() >= blocks) {
    throw std::invalid_argument("trace block " + std::to_string(traceBlocks.back()) +
                                " is outside the grid of " + std::to_string(blocks) +
                                " blocks (linear block ids 0.." + std::to_string(blocks - 1) +
                                ", x fastest)");
  }
  if (options.trace) {
    report.trace = Trace(options.traceCapBytes);
    report.tracedBlocks = traceBlocks;
  }

  DiagnosticCollector diagnostics(options.kernel, options.maxDiagnostics);
  std::vector<std::byte> shared(config.sharedBytes);
  std::vector<ShadowCell> shadow((config.sharedBytes + 3) / 4 + 1);
  BlockRunner runner(config.threadsPerBlock(), options.stackBytes);
  BlockState block;
  block.config = config;
  block.shared = shared.data();
  block.shadow = shadow.data();
  block.diagnostics = &diagnostics;

  const auto start = std::chrono::steady_clock::now();
  auto nextTraced = traceBlocks.begin();
  std::uint32_t epoch = 1;
  std::uint64_t barrierPhases = 0;
  std::uint64_t linear = 0;
  for (unsigned z = 0; z < config.gridDim.z; ++z) {
    for (unsigned y = 0; y < config.gridDim.y; ++y) {
      for (unsigned x = 0; x < config.gridDim.x; ++x, ++linear) {
        block.blockIdx = Dim3{x, y, z};
        block.blockLinear = linear;
        bool traceThis = false;
        if (options.trace) {
          if (traceBlocks.empty()) {
            traceThis = true;
          } else if (nextTraced != traceBlocks.end() && *nextTraced == linear) {
            traceThis = true;
            ++nextTraced;
          }
        }
        block.trace = traceThis ? &report.trace : nullptr;
        if (!shared.empty()) std::memset(shared.data(), 0xFF, shared.size());
        block.epoch = ++epoch;
        runner.runBlock(block, traceThis ? traced : plain, body);
        barrierPhases += block.epoch - epoch;
        epoch = block.epoch;
        if (epoch > 0xF0000000u) {  // keep epochs unique: restart them with a clean shadow
          std::fill(shadow.begin(), shadow.end(), ShadowCell{});
          epoch = 1;
        }
      }
    }
  }
  const auto stop = std::chrono::steady_clock::now();

  static_cast<LaunchCounters&>(report.stats) = block.counters;
  report.stats.blocks = blocks;
  report.stats.threads = config.threads();
  report.stats.barriers = barrierPhases;
  report.stats.elapsedS = std::chrono::duration<double>(stop - start).count();
  report.diagnostics = diagnostics.takeDiagnostics();
  report.diagnosticCounts = diagnostics.counts();
  return report;
}

}  // namespace detail
}  // namespace matmulviz::sim
