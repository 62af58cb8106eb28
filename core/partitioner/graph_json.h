#pragma once
// A joint graph as a file: the report kind "budget-graph" (docs/partitioner.md, "The graph
// file"), written by the Python tracer (`matmulviz-cli budget SCRIPT --function f --graph-out
// FILE`, through matmulviz._C._JointGraph.to_json) and read by the app's Budget view and
// `matmulviz-cli export --budget-graph`. The reader is strict: every key is required and typed,
// every number range-checked, every node id must name an earlier node, unknown keys are refused;
// each refusal is a ReportLoadError naming the file and the key path ("nodes[3].args[1]").

#include "core/partitioner/joint_graph.h"
#include "core/report/json_reader.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace matmulviz::partitioner {

/// The report kind of a graph file.
inline constexpr const char* kGraphReportKind = "budget-graph";
/// Limits the reader enforces, so that the planner's sums of sizes and FLOPs stay in 64 bits.
inline constexpr int64_t kGraphMaxNodes = 100000;
inline constexpr int64_t kGraphMaxBytes = int64_t{1} << 40;  ///< one value: 1 TiB
inline constexpr int64_t kGraphMaxFlops = int64_t{1} << 50;  ///< one op
inline constexpr int64_t kGraphMaxStorage = int64_t{1} << 53;

/// Where a graph came from: shown as the Budget view's title; script and function may be empty.
struct GraphSource {
  std::string title;     ///< e.g. "budget_chain.py: f"
  std::string script;    ///< the script's path as the tracer was given it
  std::string function;  ///< the traced function's name
};

struct GraphDocument {
  JointGraph graph;
  GraphSource source;
};

/// The document for `graph`: the report envelope (kind "budget-graph"), "title", "script",
/// "function", "forward_outputs" (how many of the output node's arguments are forward outputs)
/// and "nodes" in graph order. Sizes in bytes (_size_of), FLOPs as FlopCounterMode counts them.
nlohmann::ordered_json graphToJson(const JointGraph& graph, const GraphSource& source);

/// Parses `text`, a graph file named `file`. Throws matmulviz::ReportLoadError ("'<file>':
/// <key path> <problem>") for text that is not JSON, a missing envelope, another version or kind,
/// a missing, unknown or mistyped key, a number out of range, a node id that is not an earlier
/// node, a duplicate name, an output node that is missing, repeated or not last, or gradients that
/// do not number the primals. Never throws anything else for any input.
GraphDocument parseGraphJson(const std::string& text, const std::string& file);

/// Reads the graph file at `path` (messages name the file without its folder). Throws
/// ReportLoadError as parseGraphJson, and when the file cannot be read.
GraphDocument readGraphFile(const std::string& path);

/// True when `bytes` (the start of a file) looks like a graph file: it names the kind
/// "budget-graph". For choosing a loader, not for validation.
bool looksLikeGraphFile(const std::string& bytes);

}  // namespace matmulviz::partitioner
