#pragma once
// A Python run's report (kind "python": `python3 -m matmulviz SCRIPT --report PATH`,
// `matmulviz.record(PATH)`, `matmulviz-cli run SCRIPT --report PATH`; docs/report-format.md) as a
// memory timeline, so that the app's Memory view draws it as it draws a run made here: the
// allocator's events and allocations, each block labelled, the op that made it, and why a block
// alive at the end is alive (kept_alive_by). Qt-free. The report is read by the one reader of
// Python runs (core/report/python_report.h) and converted here.

#include "core/report/json_reader.h"
#include "core/report/python_report.h"
#include "core/report/strategies_report.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace matmulviz {

struct PythonRun {
  std::string script;    ///< the script's path as given; empty for matmulviz.record around a block
  bool complete = true;  ///< false when the script raised: the report covers what ran
  std::string error;     ///< the traceback when !complete
  std::optional<PythonTorch> torch;            ///< the PyTorch that ran it (matmulviz.simulate)
  std::vector<PythonValueRead> valueReads;     ///< reads that returned placeholders
  std::optional<PythonPinnedHost> pinnedHost;  ///< pinned host memory, apart from the device
  /// The events and allocations. The report has no requested counter per event: it is the sum
  /// of the live blocks' requested bytes. Every block's category is "other"; its label is the
  /// report's, followed by the source line that allocated it ("c[q] at train.py:12").
  MemoryTimeline timeline;
};

/// `report` as a memory timeline (see PythonRun).
PythonRun pythonRunFromReport(const PythonReport& report);

/// Reads a kind "python" report from `doc` (readPythonReport) and converts it. Throws
/// ReportLoadError naming `reader`'s file, the key path and the problem: a missing or mistyped
/// key, a negative size, an unknown event kind or pool, an op or frame index out of range.
/// Adds the keys it does not know to `ignored`.
PythonRun readPythonRun(const nlohmann::json& doc, const JsonReader& reader,
                        std::vector<std::string>& ignored);

}  // namespace matmulviz
