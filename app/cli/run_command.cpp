// matmulviz-cli run SCRIPT [ARGS...] [--report PATH]: runs a Python script written against
// `matmulviz.torch` (PyTorch's API over this engine) with Debian's python3, as
// `python3 -m matmulviz SCRIPT ... --report PATH` does; the CLI only finds the package and hands
// over. Exit status: the script's (0, 1 when it raised), 2 when the script or Python is missing.
#include "app/cli/commands.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

namespace matmulviz::cli {

namespace {

constexpr const char* kPython = "/usr/bin/python3";

}  // namespace

std::string pythonPackagePath() {
  if (const char* env = std::getenv("MATMULVIZ_PYTHONPATH"); env && *env) return env;
#ifdef MATMULVIZ_PYTHON_BUILD_DIR
  std::error_code ec;
  if (std::filesystem::exists(std::string(MATMULVIZ_PYTHON_BUILD_DIR) + "/matmulviz", ec))
    return MATMULVIZ_PYTHON_BUILD_DIR;
#endif
  return "";
}

Action addRunCommand(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "run",
      "Run a Python script written with `import matmulviz.torch as torch` (PyTorch's API on "
      "this engine: its CUDA tensors live on a simulated device) and optionally write the "
      "report of every CUDA allocation with the Python line that made it. Arguments after "
      "the script go to it.");
  auto script = std::make_shared<std::string>();
  auto report = std::make_shared<std::string>();
  cmd->add_option("script", *script, "the Python script")->required();
  cmd->add_option("--report", *report,
                  "write the allocator timeline, each allocation's Python file:line and "
                  "memory_stats() to this JSON file (docs/report-format.md)");
  cmd->allow_extras();
  cmd->positionals_at_end(false);
  return [cmd, script, report] {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(*script, ec)) {
      std::cerr << "matmulviz-cli run: no such script: " << *script << "\n";
      return 2;
    }
    if (access(kPython, X_OK) != 0) {
      std::cerr << "matmulviz-cli run: " << kPython
                << " not found (the Python module is built for Debian's python3: scripts/setup)\n";
      return 2;
    }
    const std::string path = pythonPackagePath();
    if (!path.empty()) {
      const char* old = std::getenv("PYTHONPATH");
      const std::string value = old && *old ? path + ":" + old : path;
      setenv("PYTHONPATH", value.c_str(), 1);
    }
    std::vector<std::string> args{kPython, "-m", "matmulviz", *script};
    for (const std::string& extra : cmd->remaining()) args.push_back(extra);
    if (!report->empty()) {
      args.push_back("--report");
      args.push_back(*report);
    }
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(kPython, argv.data());
    std::cerr << "matmulviz-cli run: could not start " << kPython << ": " << std::strerror(errno)
              << "\n";
    return 2;
  };
}

}  // namespace matmulviz::cli
