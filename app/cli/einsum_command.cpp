// matmulviz-cli einsum: placeholder until its issue lands (being written now).
#include "app/cli/commands.h"

#include <stdexcept>

namespace matmulviz::cli {

Action addEinsumCommand(CLI::App& app) {
  app.add_subcommand("einsum", "not available yet");
  return []() -> int { throw std::runtime_error("einsum: not available yet"); };
}

}  // namespace matmulviz::cli
