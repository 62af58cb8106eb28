#pragma once
// Real strategies reports for the model and chart tests: the "small" preset (N 1000, M 64,
// I 2, J 16, K 24), run once per strategy with the memory timeline recorded.

#include "core/strategies/preset.h"
#include "core/strategies/runner.h"

#include <string>
#include <vector>

namespace matmulviz::testing {

struct SmallRun {
  DeviceKind device = DeviceKind::Meta;
  bool requiresGradA = false, requiresGradC = false, backward = false;
  std::vector<std::string> strategies{"strategy1", "strategy2", "strategy3", "direct", "fused"};
  int64_t n = 0;  ///< rows of a and q; 0: the preset's 1000
};

/// Runs the small preset as `r` says; one repeat; timeline recorded, outputs and grads kept.
inline StrategiesReport runSmall(const SmallRun& r) {
  RunConfig c = loadPreset("small").config;
  c.device = r.device;
  c.requiresGrad = {r.requiresGradA, r.requiresGradC};
  c.backward = r.backward;
  c.strategies = r.strategies;
  c.repeats = 1;
  if (r.n > 0) c.workload.n = r.n;
  c.recordTimeline = true;
  c.keepOutputs = true;
  StrategyRunner runner(c, makeRandomInputs(c.workload, c.seed, r.device != DeviceKind::Meta));
  return runner.run();
}

}  // namespace matmulviz::testing
