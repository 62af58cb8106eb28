#include "core/io/snapshot_frames.h"

#include "core/io/snapshot_timeline.h"

#include <array>

namespace matmulviz::snapshot {

namespace {

// torch/cuda/_memory_viz.py _frame_filter (the same lists as MemoryViz.js frameFilter).
constexpr std::array<std::string_view, 8> kOmitNames{
    "unwind::unwind",    "CapturedTraceback::gather",
    "gather_with_cpp",   "_start",
    "__libc_start_main", "PyEval_",
    "PyObject_",         "PyFunction_"};
constexpr std::array<std::string_view, 10> kOmitFiles{"core/boxing",
                                                      "/Register",
                                                      "/Redispatch",
                                                      "pythonrun.c",
                                                      "Modules/main.c",
                                                      "Objects/call.c",
                                                      "Objects/methodobject.c",
                                                      "pycore_ceval.h",
                                                      "ceval.c",
                                                      "cpython/abstract.h"};

constexpr std::string_view kOpsPrefix = "at::_ops::";

bool isFactory(std::string_view op) {
  for (const std::string_view p : {"empty", "_empty", "new_empty", "zeros", "resize_"})
    if (op.starts_with(p)) return true;
  return false;
}

}  // namespace

bool memoryVizShows(const Frame& f) {
  for (const std::string_view n : kOmitNames)
    if (f.name.find(n) != std::string::npos) return false;
  for (const std::string_view n : kOmitFiles)
    if (f.filename.find(n) != std::string::npos) return false;
  return true;
}

bool isMachineryFrame(const Frame& f) {
  return !memoryVizShows(f) || f.name.find("CUDACachingAllocator") != std::string::npos ||
         f.filename.ends_with("CUDACachingAllocator.cpp") || f.filename.starts_with("Register") ||
         f.filename.starts_with("Redispatch");
}

bool isPythonFrame(const Frame& f) {
  return f.filename.ends_with(".py");
}

bool isCppFrame(const Frame& f) {
  return f.filename.empty() || f.filename == "??" || f.name.find("::") != std::string::npos;
}

std::string_view innermostOp(const MemorySnapshot& s, const std::vector<uint32_t>& frames) {
  for (const uint32_t id : frames) {
    const std::string_view name = s.frames[id].name;
    if (!name.starts_with(kOpsPrefix)) continue;
    const std::string_view rest = name.substr(kOpsPrefix.size());
    const std::string_view op = rest.substr(0, rest.find("::"));
    if (!isFactory(op)) return op;
  }
  return {};
}

std::string opName(const MemorySnapshot& s, const std::vector<uint32_t>& frames) {
  if (const std::string_view op = innermostOp(s, frames); !op.empty()) return std::string(op);
  return s.frames[labelFrame(s, frames)].name;
}

std::string frameLabel(const Frame& f) {
  const size_t slash = f.filename.find_last_of('/');
  std::string file = slash == std::string::npos ? f.filename : f.filename.substr(slash + 1);
  if (f.line > 0 || isPythonFrame(f)) file += ":" + std::to_string(f.line);
  return file;
}

}  // namespace matmulviz::snapshot
