#include "app/cli/text_options.h"

namespace matmulviz::cli {

CLI::Option* TextOptions::operator()(const char* name, std::string& into, const std::string& help,
                                     const char* type) const {
  return cmd.add_option(name, into, help)->type_name(type);
}

}  // namespace matmulviz::cli
