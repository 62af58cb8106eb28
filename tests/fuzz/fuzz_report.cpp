// Fuzzes the report loader (core/report/report_load.h): any bytes as a report file's text, read
// as the app and `matmulviz-cli export --report` read it. Every refusal must be a
// ReportLoadError naming the file and a problem; an accepted report must survive a write (toJson)
// and read round trip unchanged (a Python run's report: its events name listed ops). Anything else
// (a crash, a sanitizer report, another exception) is a finding.
#include "core/report/report_json.h"
#include "core/report/report_load.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  matmulviz::LoadedReport loaded;
  try {
    loaded = matmulviz::parseReport(text, "fuzz.json");
  } catch (const matmulviz::ReportLoadError& e) {
    if (e.file() != "fuzz.json" || e.problem().empty()) __builtin_trap();
    return 0;
  }
  if (loaded.python) {  // a Python run: every event names a listed op
    const auto& t = loaded.python->timeline;
    for (const auto& e : t.events)
      if (e.opId < 0 || static_cast<size_t>(e.opId) >= t.opNames.size()) __builtin_trap();
    return 0;
  }
  using matmulviz::TimelineInJson;
  const std::string written = matmulviz::toJson(loaded.report, TimelineInJson::Include).dump();
  const matmulviz::LoadedReport again = matmulviz::parseReport(written, "again.json");
  if (matmulviz::toJson(again.report, TimelineInJson::Include).dump() != written ||
      !again.ignored.empty())
    __builtin_trap();
  return 0;
}
