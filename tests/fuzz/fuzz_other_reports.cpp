// Fuzzes the readers of the reports that hold no timeline (core/report/other_reports.h): any
// bytes as a report file's text, read as the app and `matmulviz-cli export --report` read a
// "multihead", "budget" or "einsum" report, and as the largest-batch search's results
// (core/report/search_results.h). Every refusal must be a ReportLoadError naming the file and a
// problem; an accepted multi-head workload must be one multihead runs (validate() passes), an
// accepted budget report's budgets lie in [0, 1], accepted search results have their trials in
// increasing order and their answer in their range. Anything else is a finding.
#include "core/report/json_reader.h"
#include "core/report/other_reports.h"
#include "core/report/report_load.h"
#include "core/report/search_results.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace {

template <typename Read>
void readOrRefuse(Read read) {
  try {
    read();
  } catch (const matmulviz::ReportLoadError& e) {
    if (e.file() != "fuzz.json" || e.problem().empty()) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  readOrRefuse([&] {
    const matmulviz::SearchResults r = matmulviz::readSearchResults(text, "fuzz.json");
    for (size_t i = 1; i < r.trials.size(); ++i)
      if (r.trials[i].value <= r.trials[i - 1].value) __builtin_trap();
    if (r.largest && (*r.largest < r.lo || *r.largest > r.hi)) __builtin_trap();
  });
  nlohmann::json doc;
  try {
    doc = matmulviz::parseReportJson(text, "fuzz.json");
  } catch (const matmulviz::ReportLoadError&) {
    return 0;
  }
  readOrRefuse([&] {
    const matmulviz::MultiheadReportFile r = matmulviz::readMultiheadReport(doc, "fuzz.json");
    r.config.validate();  // throws std::invalid_argument (a finding) when it let one through
  });
  readOrRefuse([&] {
    for (const double b : matmulviz::readBudgetReport(doc, "fuzz.json").budgets)
      if (!(b >= 0 && b <= 1)) __builtin_trap();
  });
  readOrRefuse(
      [&] { (void)matmulviz::einsumSummary(matmulviz::readEinsumReport(doc, "fuzz.json")); });
  return 0;
}
