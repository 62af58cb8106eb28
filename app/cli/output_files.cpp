#include "app/cli/output_files.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace matmulviz::cli {

namespace fs = std::filesystem;

namespace {

/// Creates and removes a probe file in `dir`; throws std::invalid_argument naming `argName` and
/// the operating system's reason when that fails.
void checkCanCreateFileIn(const fs::path& dir, const std::string& argName) {
  std::string probe = (dir / ".matmulviz-write-probe-XXXXXX").string();
  const int fd = ::mkstemp(probe.data());
  if (fd < 0) {
    const int error = errno;
    throw std::invalid_argument(argName + ": cannot create a file in '" + dir.string() +
                                "': " + std::strerror(error));
  }
  ::close(fd);
  ::unlink(probe.c_str());
}

}  // namespace

void checkOutputPath(const std::string& path, const std::string& argName) {
  if (path.empty() || path == "-") return;
  const fs::path p(path);
  std::error_code ec;
  if (fs::is_directory(p, ec))
    throw std::invalid_argument(argName + ": '" + path + "' is a directory; give a file path");
  const fs::path parent = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(parent, ec))
    throw std::invalid_argument(argName + ": the directory '" + parent.string() +
                                "' does not exist" + (ec ? ": " + ec.message() : ""));
  checkCanCreateFileIn(parent, argName);
}

void checkOutputDirectory(const std::string& dir, const std::string& argName) {
  if (dir.empty())
    throw std::invalid_argument(argName + ": '' is not a directory; give one, e.g. out/run1");
  const fs::path p(dir);
  std::error_code ec;
  if (fs::exists(p, ec) && !fs::is_directory(p, ec))
    throw std::invalid_argument(argName + ": '" + dir + "' exists and is not a directory");
  fs::create_directories(p, ec);
  if (ec) throw std::invalid_argument(argName + ": cannot create '" + dir + "': " + ec.message());
  checkCanCreateFileIn(p, argName);
}

void writeFileAtomically(const std::string& path, const std::function<void(std::ostream&)>& fill) {
  const std::string tmp = path + ".tmp";
  try {
    {
      std::ofstream os(tmp, std::ios::binary | std::ios::trunc);
      if (!os) throw std::runtime_error("cannot open '" + tmp + "' for writing");
      fill(os);
      os.flush();
      if (!os) throw std::runtime_error("writing '" + tmp + "' failed");
    }
    fs::rename(tmp, path);
  } catch (...) {
    std::error_code ec;
    fs::remove(tmp, ec);
    throw;
  }
}

}  // namespace matmulviz::cli
