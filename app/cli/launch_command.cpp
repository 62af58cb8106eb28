// Placeholder until the simulated launcher lands (issue 3); replaced by the real command.
#include "app/cli/commands.h"

#include <iostream>

namespace matmulviz::cli {

Action addLaunchCommand(CLI::App& app) {
  app.add_subcommand("launch", "Run a CUDA-style kernel on the simulated launcher");
  return [] {
    std::cerr << "matmulviz-cli launch: not built yet\n";
    return 1;
  };
}

}  // namespace matmulviz::cli
