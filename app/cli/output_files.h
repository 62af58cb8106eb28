#pragma once
// Output files of the CLI: checked before any work starts, written whole or not at all.

#include <functional>
#include <ostream>
#include <string>

namespace matmulviz::cli {

/// Throws std::invalid_argument naming `argName` when `path` (unless empty or "-") is in a
/// directory that does not exist or is a directory itself.
void checkOutputPath(const std::string& path, const std::string& argName);
/// Throws std::invalid_argument naming `argName` when `dir` (unless empty) exists but is not a
/// directory, or does not exist and neither does its parent.
void checkOutputDirectory(const std::string& dir, const std::string& argName);
/// Writes through `fill` into path + ".tmp", then renames it to `path`; on failure removes the
/// temporary and throws std::runtime_error naming the file.
void writeFileAtomically(const std::string& path, const std::function<void(std::ostream&)>& fill);

}  // namespace matmulviz::cli
