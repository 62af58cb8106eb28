// matmulviz-cli ladder: placeholder until its issue lands (being written now).
#include "app/cli/commands.h"

#include <stdexcept>

namespace matmulviz::cli {

Action addLadderCommand(CLI::App& app) {
  app.add_subcommand("ladder", "not available yet");
  return []() -> int { throw std::runtime_error("ladder: not available yet"); };
}

}  // namespace matmulviz::cli
