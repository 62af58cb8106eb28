#pragma once
// Reads a matmulviz report file back into the structs the runner produces, so that a report
// written on another machine (`matmulviz-cli strategies --json r.json`) shows in the app and
// renders with `matmulviz-cli export --report` exactly as a run made here. Qt-free.
//
// The envelope (docs/report-format.md) is checked first: "format" must be "matmulviz-report",
// "version" must be kReportVersion, and "kind" must be one this reader turns into a report:
// "strategies" (a StrategiesReport) or "python" (a PythonRun, core/report/python_run.h).
// Everything it reads is checked: types, sizes >= 0, whole numbers in range. Keys this reader does
// not know are skipped and listed in LoadedReport::ignored.

#include "core/report/json_reader.h"
#include "core/report/python_run.h"
#include "core/report/strategies_report.h"

#include "core/report/report_envelope.h"

#include <optional>
#include <string>
#include <vector>

namespace matmulviz {

struct LoadedReport {
  std::string kind;                 ///< the envelope's "kind": "strategies" or "python"
  StrategiesReport report;          ///< kind "strategies"
  std::optional<PythonRun> python;  ///< kind "python"
  /// Key paths present in the file that this reader does not know ("runs[0].predicted"),
  /// skipped; for a note beside the opened report, never an error.
  std::vector<std::string> ignored;
};

/// Parses `text`, the contents of a report file named `file` (named in every message). Throws
/// ReportLoadError ("'<file>': <problem>") for an empty or truncated document, text that is not
/// JSON, a document without the matmulviz envelope, a version other than kReportVersion (the
/// message names both versions), a kind it cannot show (named), a missing or
/// mistyped key, a negative size or time, or an unknown dtype, device or backward status.
LoadedReport parseReport(const std::string& text, const std::string& file);

/// The document of a report file's `text` (the file named `file`). Throws ReportLoadError for an
/// empty or truncated document or text that is not JSON; checks nothing else.
nlohmann::json parseReportJson(const std::string& text, const std::string& file);
/// The whole text of the report file at `path`, and in `name` its file name without its folder
/// (for messages). Throws ReportLoadError naming it when it is not a regular file or cannot be
/// opened or read.
std::string readReportText(const std::string& path, std::string& name);

/// The envelope of `doc` checked ("format" is "matmulviz-report", "version" is kReportVersion,
/// both versions named otherwise): its "kind" ("strategies", "python"). Throws ReportLoadError.
std::string reportKind(const nlohmann::json& doc, const std::string& file);

/// parseReport of a document already parsed (parseReportJson), e.g. after reportKind chose it.
LoadedReport readReport(const nlohmann::json& doc, const std::string& file);

/// Reads the report file at `path`; messages name the file by its name without its folder.
/// Throws ReportLoadError as parseReport, and when the file cannot be read.
LoadedReport readReportFile(const std::string& path);

/// True when `bytes` (the start of a file) looks like a matmulviz report: a JSON object whose
/// text contains "matmulviz-report" near the start. For choosing a loader, not for validation.
bool looksLikeReport(const std::string& bytes);

}  // namespace matmulviz
