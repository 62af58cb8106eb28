#include "app/cli/output_files.h"

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace matmulviz::cli {

namespace fs = std::filesystem;

void checkOutputPath(const std::string& path, const std::string& argName) {
  if (path.empty() || path == "-") return;
  const fs::path p(path);
  if (fs::is_directory(p)) throw std::invalid_argument(argName + ": '" + path + "' is a directory");
  const fs::path parent = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(parent))
    throw std::invalid_argument(argName + ": the directory '" + parent.string() +
                                "' does not exist");
}

void checkOutputDirectory(const std::string& dir, const std::string& argName) {
  if (dir.empty()) return;
  const fs::path p(dir);
  if (fs::exists(p) && !fs::is_directory(p))
    throw std::invalid_argument(argName + ": '" + dir + "' exists and is not a directory");
  const fs::path parent = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::exists(p) && !fs::is_directory(parent))
    throw std::invalid_argument(argName + ": the directory '" + parent.string() +
                                "' does not exist");
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
