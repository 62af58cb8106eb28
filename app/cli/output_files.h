#pragma once
// Output files of the CLI: checked before any work starts (exit status 2 with the flag and the
// operating system's reason), written whole or not at all.

#include <functional>
#include <ostream>
#include <string>

namespace matmulviz::cli {

/// Checks that a file can be written at `path` (an option's value; "" means the option was not
/// given and "-" means stdout: both pass): `path` is not a directory, and a file can be created
/// in its directory (a probe file is created there and removed). Throws std::invalid_argument
/// naming `argName` and the operating system's reason, e.g.
/// "--timeline: cannot create a file in '/proc/1': No such file or directory".
void checkOutputPath(const std::string& path, const std::string& argName);

/// Makes `dir` ready to write into: creates it and its missing parents (as `mkdir -p`), then
/// checks that a file can be created in it. Throws std::invalid_argument naming `argName` for
/// an empty `dir`, a path that exists and is not a directory, or a directory that cannot be
/// created or written, with the operating system's reason, e.g.
/// "--out: cannot create '/proc/x': No such file or directory".
void checkOutputDirectory(const std::string& dir, const std::string& argName);

/// Writes through `fill` into path + ".tmp", then renames it to `path`; on failure removes the
/// temporary and throws std::runtime_error naming the file.
void writeFileAtomically(const std::string& path, const std::function<void(std::ostream&)>& fill);

}  // namespace matmulviz::cli
