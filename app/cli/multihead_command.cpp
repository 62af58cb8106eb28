// matmulviz-cli multihead: placeholder until its issue lands (being written now).
#include "app/cli/commands.h"

#include <stdexcept>

namespace matmulviz::cli {

Action addMultiheadCommand(CLI::App& app) {
  app.add_subcommand("multihead", "not available yet");
  return []() -> int { throw std::runtime_error("multihead: not available yet"); };
}

}  // namespace matmulviz::cli
