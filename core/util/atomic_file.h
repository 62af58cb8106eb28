#pragma once
// Files written whole or not at all. A process killed mid-write (SIGKILL, a crash, the power
// switch aside) leaves the previous file, or none, never a truncated one: the content goes to a
// temporary file beside the target, which rename(2) then puts in its place in one step.

#include <functional>
#include <string>

namespace matmulviz {

/// Calls `write(tmpPath)`, which must create and fill the file `tmpPath` (`path` + ".tmp", in the
/// same directory, so that the rename stays on one file system) and return true, then renames it
/// onto `path`, replacing any file there. When `write` returns false or throws, or the rename
/// fails, removes the temporary and leaves `path` as it was.
/// Throws std::runtime_error naming `path` when `write` returned false (with its `failure`
/// text) or the rename failed; rethrows what `write` threw.
void replaceFileAtomically(const std::string& path,
                           const std::function<bool(const std::string& tmpPath)>& write,
                           const std::string& failure = "could not be written");

}  // namespace matmulviz
