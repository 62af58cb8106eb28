// Fuzzes the graph file reader (core/partitioner/graph_json.h): any bytes as a "budget-graph"
// file's text, read as the Budget view and `matmulviz-cli export --budget-graph` read it. Every
// refusal must be a ReportLoadError naming the file and a problem; an accepted graph must write
// back to a document that reads to the same text, and must plan (budgets 0, 0.5 and 1) without a
// crash: a planner refusal (std::exception) is allowed, as the app shows it as a message.
#include "core/partitioner/budget.h"
#include "core/partitioner/graph_json.h"

#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace part = matmulviz::partitioner;
  const std::string text(reinterpret_cast<const char*>(data), size);
  part::GraphDocument doc;
  try {
    doc = part::parseGraphJson(text, "fuzz.json");
  } catch (const matmulviz::ReportLoadError& e) {
    if (e.file() != "fuzz.json" || e.problem().empty()) __builtin_trap();
    return 0;
  }
  const std::string written = part::graphToJson(doc.graph, doc.source).dump();
  const part::GraphDocument again = part::parseGraphJson(written, "again.json");
  if (part::graphToJson(again.graph, again.source).dump() != written) __builtin_trap();
  try {
    part::BudgetPlanner planner(doc.graph);
    for (double b : {0.0, 0.5, 1.0}) planner.plan(b);
  } catch (const std::exception&) {
  }
  return 0;
}
