#include "app/cli/tpb_option.h"

#include <stdexcept>

#include "core/util/parse_size.h"

namespace matmulviz::cli {

int parseTpb(const std::string& text) {
  try {
    return static_cast<int>(parsePositiveInt(text, "--tpb", 1, 32));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string(e.what()) +
                                ": a block of TPB x TPB threads may hold at most 1024, CUDA's "
                                "limit");
  }
}

}  // namespace matmulviz::cli
