#pragma once
// The scenario options `strategies` and `export` share: one declaration (with each command's
// defaults in its help) and one conversion to a RunConfig, so both refuse the same values with
// the same words (issue 15: one preparation path; the commands only parse, call and print).

#include "app/cli/text_options.h"
#include "core/strategies/runner.h"

#include <CLI/CLI.hpp>

#include <string>

namespace matmulviz::cli {

/// The options as typed; only the ones given explicitly override the preset.
struct ScenarioOptions {
  std::string preset;  ///< empty: RunConfig's defaults (the seed's workload)
  std::string n, m, i, j, k, batch, dtype, requiresGrad, strategies, repeats, seed, device;
  std::string deviceMemory;
  std::string pytorch, gpu;
  bool backward = false;
};

/// How a command's help states its defaults.
enum class ScenarioDefaults {
  Builtin,     ///< strategies: RunConfig's values, spelled out ("default 131072")
  FromPreset,  ///< export: "default: the preset's" (its --preset defaults to seed000)
};

/// Declares --preset, --n, --m, --i, --j, --k, --batch, --dtype, --requires-grad,
/// --strategies, --repeats, --seed, --device, --device-memory, --pytorch, --gpu and --backward
/// on `cmd`, writing
/// into `o` (which must outlive `cmd`). `deviceHelp` describes --device for this command.
void addScenarioOptions(CLI::App& cmd, ScenarioOptions& o, ScenarioDefaults defaults,
                        const char* deviceHelp);

/// The preset (when o.preset is not empty, else RunConfig's defaults), then every option given
/// explicitly on `cmd`. Throws BadInput (worded by cliMessage) or std::invalid_argument whose
/// message starts with the option ("--dtype: 'float64' is not allowed ...").
RunConfig scenarioConfig(const ScenarioOptions& o, const CLI::App& cmd);

}  // namespace matmulviz::cli
