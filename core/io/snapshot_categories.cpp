#include "core/io/snapshot_categories.h"

#include <array>
#include <string_view>

namespace matmulviz::snapshot {

namespace {

/// A rule on one frame: `file` a part of its filename ("" any), `name` its function, exact or,
/// ending in '*', a prefix ("*" any). Matches a stack when any of its frames matches.
struct FrameRule {
  MemoryCategory category;
  std::string_view file;
  std::string_view name;
  std::string_view reason;
};

constexpr std::array kFrameRules{
    FrameRule{MemoryCategory::Gradients, "", "torch::autograd::Engine::*",
              "a frame of the autograd engine (torch::autograd::Engine)"},
    FrameRule{MemoryCategory::Gradients, "", "torch::autograd::generated::*",
              "a generated backward node (torch::autograd::generated)"},
    FrameRule{MemoryCategory::Gradients, "torch/autograd/__init__.py", "backward",
              "torch.autograd.backward"},
    FrameRule{MemoryCategory::Gradients, "torch/autograd/__init__.py", "grad",
              "torch.autograd.grad"},
    FrameRule{MemoryCategory::Gradients, "torch/autograd/graph.py", "_engine_run_backward",
              "torch/autograd/graph.py _engine_run_backward"},
    FrameRule{MemoryCategory::Gradients, "", "backward", "a frame named backward"},
    FrameRule{MemoryCategory::Other, "torch/optim/", "*", "a frame in torch/optim/ (an optimizer)"},
};

/// A rule on the innermost dispatcher frame's op (at::_ops::<op>::...).
struct OpRule {
  MemoryCategory category;
  std::array<std::string_view, 8> ops;  // "" pads
  std::string_view reason;
};

constexpr std::array kOpRules{
    OpRule{MemoryCategory::GatheredCopy,
           {"index", "index_Tensor", "index_select", "gather", "embedding"},
           "the result of a gather (at::_ops::%s)"},
    OpRule{MemoryCategory::Outputs,
           {"mm", "bmm", "matmul", "addmm", "baddbmm", "addbmm", "linear", "einsum"},
           "the result of a matrix multiplication (at::_ops::%s)"},
};

constexpr std::string_view kOpsPrefix = "at::_ops::";

bool nameMatches(std::string_view pattern, std::string_view name) {
  if (!pattern.empty() && pattern.back() == '*')
    return name.starts_with(pattern.substr(0, pattern.size() - 1));
  return name == pattern;
}

bool frameMatches(const FrameRule& r, const Frame& f) {
  return (r.file.empty() || f.filename.find(r.file) != std::string::npos) &&
         nameMatches(r.name, f.name);
}

/// Ops that only make the memory another op asked for (at::empty in an op's body).
bool isFactory(std::string_view op) {
  for (const std::string_view p : {"empty", "_empty", "new_empty", "zeros", "resize_"})
    if (op.starts_with(p)) return true;
  return false;
}

/// The op of the innermost at::_ops:: frame that is not a factory; empty when there is none.
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

/// The category and the reason (empty: no rule matched).
std::pair<MemoryCategory, std::string> classify(const MemorySnapshot& s, StackId stack) {
  if (stack >= s.stacks.size()) return {MemoryCategory::Other, {}};
  const auto& frames = s.stacks[stack];
  for (const FrameRule& r : kFrameRules)
    for (const uint32_t id : frames)
      if (frameMatches(r, s.frames[id])) return {r.category, std::string(r.reason)};
  const std::string_view op = innermostOp(s, frames);
  if (op.empty()) return {MemoryCategory::Other, {}};
  for (const OpRule& r : kOpRules)
    for (const std::string_view o : r.ops)
      if (!o.empty() && o == op) {
        std::string reason(r.reason);
        reason.replace(reason.find("%s"), 2, op);
        return {r.category, reason};
      }
  return {MemoryCategory::Other, {}};
}

}  // namespace

MemoryCategory categoryOfStack(const MemorySnapshot& snapshot, StackId stack) {
  return classify(snapshot, stack).first;
}

std::string categoryReason(const MemorySnapshot& snapshot, StackId stack) {
  return classify(snapshot, stack).second;
}

std::vector<MemoryCategory> categoriesOfStacks(const MemorySnapshot& snapshot) {
  std::vector<MemoryCategory> out(snapshot.stacks.size(), MemoryCategory::Other);
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = categoryOfStack(snapshot, static_cast<StackId>(i));
  return out;
}

std::string categoryRulesText() {
  std::string out = "Categories from the frames (first rule that a frame matches):\n";
  for (const FrameRule& r : kFrameRules)
    out += "  " + std::string(memoryCategoryName(r.category)) + ": " + std::string(r.reason) + "\n";
  for (const OpRule& r : kOpRules) {
    std::string ops;
    for (const std::string_view o : r.ops)
      if (!o.empty()) ops += (ops.empty() ? "" : ", ") + std::string(o);
    std::string reason(r.reason);
    reason.replace(reason.find("%s"), 2, "{" + ops + "}");
    out +=
        "  " + std::string(memoryCategoryName(r.category)) + ": " + reason + ", the innermost op\n";
  }
  return out + "  anything else: other (inputs and saved for backward are never derived)";
}

}  // namespace matmulviz::snapshot
