#pragma once
// One strategies run as the command line does it: progress lines on standard error, the CLI's
// remedies added to skipped backwards, and each refusal or failure printed as
// "matmulviz-cli <command>: <message>" with the command's exit status. Used by `strategies` and
// `export`, so both word the same things the same way.

#include "core/report/strategies_report.h"
#include "core/strategies/runner.h"

#include <functional>
#include <optional>

namespace matmulviz::cli {

/// Calls `run` with a progress function that prints "[matmulviz] <describe(p)>" for each
/// RunProgress but the last (the caller's own output says the run ended), then adds the CLI's
/// remedies (addCliRemedies). `run` makes the runner, checks host memory and runs it. On
/// BadInput or std::invalid_argument it prints the message (a BadInput in the CLI's words,
/// cliMessage) and returns no report with *exitCode = 2; on another std::runtime_error (a CUDA
/// device that failed) *exitCode = 1.
std::optional<StrategiesReport> runForCli(
    const char* command, const std::function<StrategiesReport(const ProgressFn&)>& run,
    int* exitCode);

}  // namespace matmulviz::cli
