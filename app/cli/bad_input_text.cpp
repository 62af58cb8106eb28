#include "app/cli/bad_input_text.h"

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
                                                        {"device memory", "--device-memory"}};
  const auto it = flags.find(e.field());
  return it == flags.end() ? e.reason() : it->second + ": " + e.reason();
}

}  // namespace matmulviz::cli
