// Fuzzes the loader of a Python run's report (core/report/python_report.h): any bytes as the
// text of `python3 -m matmulviz SCRIPT --report FILE`, read as the app's Program view reads it.
// Every refusal must be a ReportLoadError naming the file and a problem; an accepted report must
// keep its indices in range (each allocation's frame and op, the peak's event), as the view
// relies on. Anything else (a crash, a sanitizer report, another exception) is a finding.
#include "core/report/json_reader.h"
#include "core/report/python_report.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  matmulviz::PythonReport r;
  try {
    r = matmulviz::parsePythonReport(text, "fuzz.json");
  } catch (const matmulviz::ReportLoadError& e) {
    if (e.file() != "fuzz.json" || e.problem().empty()) __builtin_trap();
    return 0;
  }
  for (const matmulviz::PythonAllocation& a : r.allocations)
    if (a.frame >= int64_t(r.frames.size()) || a.frame < -1 || a.op < 0 ||
        size_t(a.op) >= r.ops.size() || a.blockBytes < 0)
      __builtin_trap();
  for (const matmulviz::MemoryEvent& e : r.events)
    if (e.opId < 0 || size_t(e.opId) >= r.ops.size() || e.bytes < 0) __builtin_trap();
  if (r.peak && r.peak->event >= r.events.size()) __builtin_trap();
  return 0;
}
