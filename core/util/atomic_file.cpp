#include "core/util/atomic_file.h"

#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace matmulviz {

void replaceFileAtomically(const std::string& path,
                           const std::function<bool(const std::string& tmpPath)>& write,
                           const std::string& failure) {
  const std::string tmp = path + ".tmp";
  std::error_code ec;
  auto discard = [&] { std::filesystem::remove(tmp, ec); };
  bool written = false;
  try {
    written = write(tmp);
  } catch (...) {
    discard();
    throw;
  }
  if (!written) {
    discard();
    throw std::runtime_error("'" + path + "': " + failure);
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    const std::string why = ec.message();
    discard();
    throw std::runtime_error("'" + path + "': cannot rename '" + tmp + "' to it: " + why);
  }
}

}  // namespace matmulviz
