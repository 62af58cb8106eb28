#include "app/cli/scenario_options.h"

#include "core/strategies/preset.h"
#include "core/strategies/strategy.h"
#include "core/util/bad_input.h"
#include "core/util/parse_size.h"

#include <sstream>
#include <stdexcept>

namespace matmulviz::cli {

namespace {

/// Sizes up to 2^40: far beyond any machine, and a bound a person can read.
constexpr int64_t kMaxSize = int64_t{1} << 40;

/// Runs `parse`, prefixing the message of its std::invalid_argument with `arg` ("--dtype: ").
template <typename F>
auto forArgument(const char* arg, F&& parse) {
  try {
    return parse();
  } catch (const BadInput&) {  // names its field: worded by cliMessage
    throw;
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    if (msg.rfind("--", 0) == 0) throw;
    throw std::invalid_argument(std::string(arg) + ": " + msg);
  }
}

void applyWorkload(const ScenarioOptions& o, const CLI::App& cmd, Workload& w) {
  auto given = [&](const char* name) { return cmd.get_option(name)->count() > 0; };
  if (given("--n")) w.n = parsePositiveInt(o.n, "--n", 1, kMaxSize);
  if (given("--m")) w.m = parsePositiveInt(o.m, "--m", 1, kMaxSize);
  if (given("--i")) w.i = parsePositiveInt(o.i, "--i", 1, kMaxSize);
  if (given("--j")) w.j = parsePositiveInt(o.j, "--j", 1, kMaxSize);
  if (given("--k")) w.k = parsePositiveInt(o.k, "--k", 1, kMaxSize);
  if (given("--batch")) w.batch = parsePositiveInt(o.batch, "--batch", 1, kMaxSize);
  if (given("--dtype")) {
    w.dtype = forArgument("--dtype", [&] { return parseDType(o.dtype); });
    if (w.dtype == DType::Float64 || !isFloating(w.dtype))
      throw std::invalid_argument("--dtype: '" + o.dtype +
                                  "' is not allowed (allowed: float32, float16, bfloat16)");
  }
  forArgument("--n/--m/--i/--j/--k", [&] {
    w.validate();
    return 0;
  });
}

std::vector<std::string> parseStrategies(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  for (std::string s; std::getline(ss, s, ',');) {
    forArgument("--strategies", [&] { return findStrategy(s).name; });
    out.push_back(s);
  }
  if (out.empty()) throw std::invalid_argument("--strategies: give at least one");
  return out;
}

}  // namespace

void addScenarioOptions(CLI::App& cmd, ScenarioOptions& o, ScenarioDefaults defaults,
                        const char* deviceHelp) {
  const bool preset = defaults == ScenarioDefaults::FromPreset;
  const TextOptions text{cmd};
  // `help` and this command's default: the built-in value, or the preset's.
  auto option = [&](const char* name, std::string& into, const std::string& help,
                    const char* builtin, const char* type) {
    const std::string def = preset ? "default: the preset's" : std::string("default ") + builtin;
    text(name, into, help + " (" + def + ")", type);
  };
  text("--preset", o.preset,
       preset ? "a preset scenario: seed000 (default), seed000-grad, small, huge-meta"
              : "a preset scenario: seed000, seed000-grad, small, huge-meta",
       "NAME");
  option("--n", o.n, "N: rows of a and of q", "131072", "INT");
  option("--m", o.m, "M: matrices in c", "2048", "INT");
  option("--i", o.i, "I: rows of each a[n]", "1", "INT");
  option("--j", o.j, "J: the contracted dimension", "64", "INT");
  option("--k", o.k, "K: columns of each c[m]", "64", "INT");
  option("--batch", o.batch, "strategy3's batch", "256", "INT");
  option("--dtype", o.dtype, "float32 | float16 | bfloat16", "float32", "DTYPE");
  option("--requires-grad", o.requiresGrad, "none | a | c | a,c", "none", "WHICH");
  option("--strategies", o.strategies,
         "comma-separated: strategy1,strategy2,strategy3,direct,fused", "all", "LIST");
  option("--repeats", o.repeats,
         "runs per strategy; the first is reported as cold, median/min/max are over the others",
         "3", "INT");
  option("--seed", o.seed, "seed of the random a, c, q and grad_output", "0", "INT");
  text("--device", o.device, deviceHelp, "DEVICE");
  text("--device-memory", o.deviceMemory, "capacity of the simulated device, e.g. 1GiB", "SIZE");
  option("--pytorch", o.pytorch,
         "the PyTorch the memory model follows: 2.x (each thread's cuBLAS workspace is "
         "allocated through the caching allocator, 32 MiB on sm_90) or forum (the forum post's "
         "PyTorch: no workspace counted; the seed000 presets' choice)",
         "2.x", "VERSION");
  option("--gpu", o.gpu,
         "the GPU architecture the memory model sizes buffers for: " + gpuArchitectureKeys(),
         "h200", "GPU");
  cmd.add_flag("--backward", o.backward,
               "also run backward with a random grad_output and check dA, dC");
}

RunConfig scenarioConfig(const ScenarioOptions& o, const CLI::App& cmd) {
  RunConfig c = o.preset.empty() ? RunConfig{} : loadPreset(o.preset).config;
  auto given = [&](const char* name) { return cmd.get_option(name)->count() > 0; };
  applyWorkload(o, cmd, c.workload);
  if (given("--requires-grad")) c.requiresGrad = RequiresGrad::parse(o.requiresGrad);
  if (given("--strategies")) c.strategies = parseStrategies(o.strategies);
  if (given("--repeats"))
    c.repeats = static_cast<int>(parsePositiveInt(o.repeats, "--repeats", 1, 1000));
  if (given("--seed")) c.seed = static_cast<uint64_t>(parsePositiveInt(o.seed, "--seed", 0));
  if (given("--device"))
    c.device = forArgument("--device", [&] { return parseDeviceKind(o.device); });
  if (given("--device-memory")) {
    c.deviceMemoryBytes = parseByteSize(o.deviceMemory, "--device-memory");
    if (*c.deviceMemoryBytes <= 0)
      throw std::invalid_argument("--device-memory: must be more than 0 bytes, e.g. 1GiB");
  }
  if (given("--pytorch"))
    c.pytorch.version = forArgument("--pytorch", [&] { return parsePyTorchVersion(o.pytorch); });
  if (given("--gpu")) {
    if (!findGpuArchitecture(o.gpu))
      throw std::invalid_argument("--gpu: '" + o.gpu +
                                  "' is not allowed (allowed: " + gpuArchitectureKeys() + ")");
    c.pytorch.gpu = o.gpu;
  }
  if (given("--backward")) c.backward = o.backward;
  return c;
}

}  // namespace matmulviz::cli
