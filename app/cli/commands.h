#pragma once
// Subcommands of matmulviz-cli. Each file adds one subcommand to the CLI11 app; main.cpp composes.
// Exit codes (DESIGN.md, command-line contract): 0 success, 1 a run failed, 2 bad input.

#include <CLI/CLI.hpp>

#include <functional>

namespace matmulviz::cli {

/// A subcommand's action; returns the process exit code.
using Action = std::function<int()>;

/// Each registers its subcommand on `app` and returns the action to run when it is chosen.
Action addStrategiesCommand(CLI::App& app);
Action addDevicesCommand(CLI::App& app);
Action addLaunchCommand(CLI::App& app);

}  // namespace matmulviz::cli
