#pragma once
// Output files of the CLI: checked before any work starts, written whole or not at all.

#include <functional>
#include <ostream>
#include <string>

namespace matmulviz::cli {

/// Throws std::invalid_argument naming `argName` when `path` (unless empty or "-") is in a
/// directory that does not exist or is a directory itself.
void checkOutputPath(const std::string& path, const std::string& argName);
/// Writes through `fill` into path + ".tmp", then renames it to `path`; on failure removes the
/// temporary and throws std::runtime_error naming the file.
void writeFileAtomically(const std::string& path, const std::function<void(std::ostream&)>& fill);

}  // namespace matmulviz::cli
