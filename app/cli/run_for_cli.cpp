#include "app/cli/run_for_cli.h"

#include "app/cli/bad_input_text.h"

#include <iostream>
#include <stdexcept>

namespace matmulviz::cli {

std::optional<StrategiesReport> runForCli(
    const char* command, const std::function<StrategiesReport(const ProgressFn&)>& run,
    int* exitCode) {
  const auto fail = [&](const std::string& message, int status) {
    std::cerr << "matmulviz-cli " << command << ": " << message << "\n";
    *exitCode = status;
    return std::optional<StrategiesReport>();
  };
  const ProgressFn progress = [](const RunProgress& p) {
    if (p.phase != RunProgress::Phase::Finished)  // the caller's output says it ended
      std::cerr << "[matmulviz] " << describe(p) << "\n";
  };
  try {
    StrategiesReport report = run(progress);
    addCliRemedies(report);
    return report;
  } catch (const BadInput& e) {
    return fail(cliMessage(e), 2);
  } catch (const std::invalid_argument& e) {
    return fail(e.what(), 2);
  } catch (const std::runtime_error& e) {  // kernels::cuda::CudaError: the device failed
    return fail(e.what(), 1);
  }
}

}  // namespace matmulviz::cli
