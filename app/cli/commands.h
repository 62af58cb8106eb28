#pragma once
// Subcommands of matmulviz-cli. Each file adds one subcommand to the CLI11 app; main.cpp composes.
// Exit codes (README, "More of the command line"): 0 success, 1 a run failed, 2 bad input.

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace matmulviz::cli {

/// A subcommand's action; returns the process exit code.
using Action = std::function<int()>;

/// Each registers its subcommand on `app` and returns the action to run when it is chosen.
Action addStrategiesCommand(CLI::App& app);
Action addDevicesCommand(CLI::App& app);
Action addLaunchCommand(CLI::App& app);
Action addMultiheadCommand(CLI::App& app);  // multihead_command.cpp
Action addEinsumCommand(CLI::App& app);     // einsum_command.cpp
Action addLadderCommand(CLI::App& app);     // ladder_command.cpp
Action addRunCommand(CLI::App& app);        // run_command.cpp: a Python script on the engine
Action addBudgetCommand(CLI::App& app);     // budget_command.cpp: activation memory budgets
Action addCompareCommand(CLI::App& app);    // compare_command.cpp: two reports' difference
Action addCalibrateCommand(CLI::App& app);  // calibrate_command.cpp: a GPU profile for --model
/// Where the matmulviz Python package is (run_command.cpp): $MATMULVIZ_PYTHONPATH, else the build
/// tree this CLI was built in (when it holds the module), else "" (an installed package, on
/// python3's own path).
std::string pythonPackagePath();
/// Traces `function` of the Python script `script` into the graph file `graphOut` (report kind
/// "budget-graph") with Debian's python3 (budget_command.cpp: `budget --graph-out --no-sweep`).
/// Returns 0, 1 when the script failed, 2 for bad input; the tracer's messages go to stderr.
int traceToGraphFile(const std::string& script, const std::string& function,
                     const std::string& graphOut);
/// export_command.cpp; built only with the GUI libraries (MATMULVIZ_HAVE_EXPORT), since it
/// renders the charts with the same code as the desktop app.
Action addExportCommand(CLI::App& app);

}  // namespace matmulviz::cli
