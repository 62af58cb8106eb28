// matmulviz-cli: the headless front end. Composition only: each subcommand lives in its own file.
#include "app/cli/commands.h"

#include <exception>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

int main(int argc, char** argv) {
  CLI::App app{
      "matmulviz-cli: how a matrix multiplication executes on a GPU and what memory it costs.\n"
      "Exit codes: 0 success, 1 a run failed (e.g. out of memory), 2 bad input."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "matmulviz 0.1.0");
  using namespace matmulviz::cli;
  const std::vector<std::pair<std::string, Action>> commands = {
      {"strategies", addStrategiesCommand(app)},
      {"launch", addLaunchCommand(app)},
      {"devices", addDevicesCommand(app)},
      {"multihead", addMultiheadCommand(app)},
      {"einsum", addEinsumCommand(app)},
      {"ladder", addLadderCommand(app)},
      {"run", addRunCommand(app)},
      {"budget", addBudgetCommand(app)},
      {"compare", addCompareCommand(app)},
      {"calibrate", addCalibrateCommand(app)},
#ifdef MATMULVIZ_HAVE_EXPORT
      {"export", addExportCommand(app)},
#endif
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help or the message
    return code == 0 ? 0 : 2;
  }
  try {
    for (const CLI::App* sub : app.get_subcommands()) {
      for (const auto& [name, action] : commands) {
        if (sub->get_name() == name) return action();
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "matmulviz-cli: error: " << e.what() << "\n";
    return 1;
  }
  return 2;
}
