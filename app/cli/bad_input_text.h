#pragma once
// The command line's words for a value the engine refuses (core/util/bad_input.h): the field
// becomes the flag that sets it, so "dtype: ..." reads "--dtype: ...".

#include "core/util/bad_input.h"

#include <string>

namespace matmulviz::cli {

/// "--dtype: <reason>" for a field a flag sets; the reason alone for one no flag sets (the
/// host memory a workload needs).
std::string cliMessage(const BadInput& e);

}  // namespace matmulviz::cli
