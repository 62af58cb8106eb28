#include "app/cli/bad_input_text.h"

#include "core/report/strategies_report.h"

#include <map>

namespace matmulviz::cli {

std::string cliMessage(const BadInput& e) {
  static const std::map<std::string, std::string> flags{{"n", "--n"},
                                                        {"m", "--m"},
                                                        {"i", "--i"},
                                                        {"j", "--j"},
                                                        {"k", "--k"},
                                                        {"batch", "--batch"},
                                                        {"sizes", "--n/--m/--i/--j/--k"},
                                                        {"repeats", "--repeats"},
                                                        {"strategies", "--strategies"},
                                                        {"dtype", "--dtype"},
                                                        {"device memory", "--device-memory"},
                                                        {"device", "--device"},
                                                        {"grad output", "--grad-output"},
                                                        {"requires_grad", "--requires-grad"},
                                                        {"a", "--a"},
                                                        {"c", "--c"},
                                                        {"q", "--q"},
                                                        {"preset", "--preset"}};
  const auto it = flags.find(e.field());
  return it == flags.end() ? e.reason() : it->second + ": " + e.reason();
}

void addCliRemedies(StrategiesReport& report) {
  using R = BackwardOutcome::Reason;
  for (StrategyRun& r : report.runs) {
    std::string& message = r.backward.message;
    if (r.backward.reason == R::NothingRequiresGrad)
      message += ": use --requires-grad a, c or a,c";
    else if (r.backward.reason == R::OverTimeLimit)
      message += "; rerun with --force to run it";
  }
}

}  // namespace matmulviz::cli
