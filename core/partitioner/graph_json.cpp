#include "core/partitioner/graph_json.h"

#include "core/report/report_envelope.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

namespace matmulviz::partitioner {

namespace {

constexpr std::array<std::pair<NodeKind, const char*>, 4> kKinds{
    {{NodeKind::Primal, "primal"},
     {NodeKind::Tangent, "tangent"},
     {NodeKind::CallFunction, "call_function"},
     {NodeKind::Output, "output"}}};
constexpr std::array<std::pair<ValueKind, const char*>, 3> kValues{
    {{ValueKind::Tensor, "tensor"},
     {ValueKind::Tuple, "tuple"},
     {ValueKind::NonTensor, "non_tensor"}}};
constexpr std::array<const char*, 8> kTopKeys{
    "format", "version", "kind", "title", "script", "function", "forward_outputs", "nodes"};
constexpr std::array<const char*, 10> kNodeKeys{
    "name", "op", "kind", "value", "args", "nested_args", "bytes", "storage", "static_parameter",
    "flops"};

template <typename E, size_t N>
const char* nameOf(const std::array<std::pair<E, const char*>, N>& table, E e) {
  for (const auto& [value, name] : table)
    if (value == e) return name;
  return "?";
}

nlohmann::ordered_json ids(std::span<const NodeId> list) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (NodeId id : list)
    a.push_back(id == kNoNode ? nlohmann::ordered_json() : nlohmann::ordered_json(id));
  return a;
}

nlohmann::ordered_json nodeJson(const JointGraph& g, const Node& n) {
  nlohmann::ordered_json j;
  j["name"] = n.name;
  j["op"] = n.op;
  j["kind"] = nameOf(kKinds, n.kind);
  j["value"] = nameOf(kValues, n.value);
  if (n.kind == NodeKind::Output) {
    auto args = ids(g.forwardOutputs());
    for (const auto& grad : ids(g.gradOutputs())) args.push_back(grad);
    j["args"] = std::move(args);
  } else {
    j["args"] = ids(n.args);
  }
  j["nested_args"] = ids(n.nestedArgs);
  j["bytes"] = n.bytes;
  j["storage"] = n.storage ? nlohmann::ordered_json(*n.storage) : nlohmann::ordered_json();
  j["static_parameter"] = n.staticParameter;
  j["flops"] = n.flops;
  return j;
}

/// Reads one document into a builder, checking as it goes.
class GraphReader {
 public:
  explicit GraphReader(const std::string& file) : r_(file) {}

  GraphDocument read(const nlohmann::json& doc) {
    checkEnvelope(doc);
    GraphDocument out;
    out.source.title = r_.string(r_.member(doc, "", "title"), "title");
    out.source.script = r_.string(r_.member(doc, "", "script"), "script");
    out.source.function = r_.string(r_.member(doc, "", "function"), "function");
    forwardCount_ =
        r_.integer(r_.member(doc, "", "forward_outputs"), "forward_outputs", 0, kGraphMaxNodes);
    const nlohmann::json& nodes = r_.array(r_.member(doc, "", "nodes"), "nodes");
    if (nodes.empty()) r_.fail("nodes", "is empty: a graph ends with its output node");
    if (static_cast<int64_t>(nodes.size()) > kGraphMaxNodes)
      r_.fail("nodes", "has " + std::to_string(nodes.size()) + " nodes (at most " +
                           std::to_string(kGraphMaxNodes) + ")");
    for (size_t i = 0; i < nodes.size(); ++i) readNode(nodes[i], jsonPath("nodes", i), i);
    if (!hasOutput_) r_.fail("nodes", "has no output node (the last node must be one)");
    out.graph = builder_.build();
    return out;
  }

 private:
  void checkEnvelope(const nlohmann::json& doc) const {
    if (!doc.is_object() || !doc.contains("format") || doc["format"] != "matmulviz-report")
      r_.fail("", "is not a matmulviz report (it has no \"format\": \"matmulviz-report\")");
    const int64_t version = r_.integer(r_.member(doc, "", "version"), "version", 0, 1 << 20);
    if (version != kReportVersion)
      r_.fail("version", "is " + std::to_string(version) + "; this matmulviz reads version " +
                             std::to_string(kReportVersion));
    const std::string kind = r_.string(r_.member(doc, "", "kind"), "kind");
    if (kind != kGraphReportKind)
      r_.fail("kind", "is '" + kind + "', not a joint graph ('" + kGraphReportKind +
                          "', written by matmulviz-cli budget SCRIPT --graph-out FILE)");
    refuseUnknown(doc, "", kTopKeys);
  }

  template <size_t N>
  void refuseUnknown(const nlohmann::json& object, const std::string& path,
                     const std::array<const char*, N>& known) const {
    for (auto it = object.begin(); it != object.end(); ++it)
      if (std::none_of(known.begin(), known.end(), [&](const char* k) { return it.key() == k; }))
        r_.fail(jsonPath(path, it.key()), "is not a key of a graph file");
  }

  template <typename E, size_t N>
  E choice(const nlohmann::json& j, const std::string& path,
           const std::array<std::pair<E, const char*>, N>& table) const {
    const std::string s = r_.string(j, path);
    std::string allowed;
    for (const auto& [value, name] : table) {
      if (s == name) return value;
      allowed += (allowed.empty() ? "" : ", ") + std::string(name);
    }
    r_.fail(path, "is '" + s + "' (allowed: " + allowed + ")");
  }

  /// Ids of earlier nodes; `nulls`: null is kNoNode.
  std::vector<NodeId> idList(const nlohmann::json& j, const std::string& path, size_t self,
                             bool nulls = false) const {
    std::vector<NodeId> out;
    const nlohmann::json& a = r_.array(j, path);
    for (size_t i = 0; i < a.size(); ++i) {
      if (nulls && a[i].is_null()) {
        out.push_back(kNoNode);
        continue;
      }
      const int64_t last = static_cast<int64_t>(self) - 1;
      if (last < 0) r_.fail(jsonPath(path, i), "names a node, but node 0 has no earlier node");
      out.push_back(static_cast<NodeId>(r_.integer(a[i], jsonPath(path, i), 0, last)));
    }
    return out;
  }

  void readNode(const nlohmann::json& j, const std::string& path, size_t index) {
    r_.object(j, path);
    refuseUnknown(j, path, kNodeKeys);
    auto key = [&](const char* k) -> const nlohmann::json& { return r_.member(j, path, k); };
    if (hasOutput_) r_.fail(path, "follows the output node (the output node is the last)");
    Node n;
    n.name = r_.string(key("name"), jsonPath(path, "name"));
    if (n.name.empty()) r_.fail(jsonPath(path, "name"), "is empty");
    n.op = r_.string(key("op"), jsonPath(path, "op"));
    n.kind = choice(key("kind"), jsonPath(path, "kind"), kKinds);
    n.value = choice(key("value"), jsonPath(path, "value"), kValues);
    n.bytes = r_.integer(key("bytes"), jsonPath(path, "bytes"), 0, kGraphMaxBytes);
    n.flops = r_.integer(key("flops"), jsonPath(path, "flops"), 0, kGraphMaxFlops);
    n.staticParameter = r_.boolean(key("static_parameter"), jsonPath(path, "static_parameter"));
    if (!key("storage").is_null())
      n.storage = r_.integer(key("storage"), jsonPath(path, "storage"), 0, kGraphMaxStorage);
    n.nestedArgs = idList(key("nested_args"), jsonPath(path, "nested_args"), index);
    const bool output = n.kind == NodeKind::Output;
    const std::vector<NodeId> args = idList(key("args"), jsonPath(path, "args"), index, output);
    checkShape(n, args, path);
    if (output) {
      addOutput(args, path);
      return;
    }
    n.args = args;
    if (n.kind == NodeKind::Primal) ++primals_;
    try {
      builder_.node(std::move(n));
    } catch (const std::invalid_argument& e) {
      r_.fail(path, e.what());
    }
  }

  /// What each kind allows: inputs have no op and no arguments; a call has an op; only a primal
  /// is a parameter; only a tensor lives in a storage.
  void checkShape(const Node& n, const std::vector<NodeId>& args, const std::string& path) const {
    const bool call = n.kind == NodeKind::CallFunction;
    if (call && n.op.empty()) r_.fail(jsonPath(path, "op"), "is empty for a call_function node");
    if (!call && !n.op.empty())
      r_.fail(jsonPath(path, "op"),
              "must be empty for a node of kind " + std::string(nameOf(kKinds, n.kind)));
    const bool input = n.kind == NodeKind::Primal || n.kind == NodeKind::Tangent;
    if (input && (!args.empty() || !n.nestedArgs.empty()))
      r_.fail(jsonPath(path, "args"), "must be empty for an input (primal or tangent)");
    if (input && n.value != ValueKind::Tensor)
      r_.fail(jsonPath(path, "value"), "must be 'tensor' for an input");
    if (n.kind == NodeKind::Output && (n.value != ValueKind::NonTensor || n.bytes != 0 ||
                                       n.flops != 0 || n.storage || !n.nestedArgs.empty()))
      r_.fail(path,
              "is the output node: value 'non_tensor', bytes 0, flops 0, storage null, "
              "no nested_args");
    if (n.staticParameter && n.kind != NodeKind::Primal)
      r_.fail(jsonPath(path, "static_parameter"), "is true for a node that is not a primal");
    if (n.storage && n.value != ValueKind::Tensor)
      r_.fail(jsonPath(path, "storage"), "must be null for a value that is not a tensor");
  }

  void addOutput(const std::vector<NodeId>& args, const std::string& path) {
    const auto count = static_cast<size_t>(forwardCount_);
    if (args.size() != count + static_cast<size_t>(primals_))
      r_.fail(jsonPath(path, "args"),
              "has " + std::to_string(args.size()) + " entries; expected forward_outputs (" +
                  std::to_string(count) + ") plus one gradient or null per primal (" +
                  std::to_string(primals_) + ")");
    std::vector<NodeId> fwd(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(count));
    std::vector<NodeId> grads(args.begin() + static_cast<std::ptrdiff_t>(count), args.end());
    for (size_t i = 0; i < fwd.size(); ++i)
      if (fwd[i] == kNoNode)
        r_.fail(jsonPath(jsonPath(path, "args"), i),
                "is a forward output: "
                "not null");
    try {
      builder_.output(std::move(fwd), std::move(grads));
    } catch (const std::invalid_argument& e) {
      r_.fail(path, e.what());
    }
    hasOutput_ = true;
  }

  JsonReader r_;
  JointGraphBuilder builder_;
  int64_t forwardCount_ = 0;
  int64_t primals_ = 0;
  bool hasOutput_ = false;
};

}  // namespace

nlohmann::ordered_json graphToJson(const JointGraph& graph, const GraphSource& source) {
  nlohmann::ordered_json j = reportEnvelope(kGraphReportKind);
  j["title"] = source.title;
  j["script"] = source.script;
  j["function"] = source.function;
  j["forward_outputs"] = graph.forwardOutputs().size();
  nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
  for (const Node& n : graph.nodes()) nodes.push_back(nodeJson(graph, n));
  j["nodes"] = std::move(nodes);
  return j;
}

GraphDocument parseGraphJson(const std::string& text, const std::string& file) {
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded())
    throw ReportLoadError(file, text.empty() ? "is empty" : "is not JSON (or is cut short)");
  try {
    return GraphReader(file).read(doc);
  } catch (const ReportLoadError&) {
    throw;
  } catch (const std::exception& e) {  // the builder's last checks
    throw ReportLoadError(file, e.what());
  }
}

GraphDocument readGraphFile(const std::string& path) {
  const std::string name = std::filesystem::path(path).filename().string();
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ReportLoadError(name, "cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  return parseGraphJson(text.str(), name);
}

bool looksLikeGraphFile(const std::string& bytes) {
  return bytes.find("matmulviz-report") != std::string::npos &&
         bytes.find(std::string("\"") + kGraphReportKind + "\"") != std::string::npos;
}

}  // namespace matmulviz::partitioner
