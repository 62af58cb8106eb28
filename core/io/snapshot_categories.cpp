#include "core/io/snapshot_categories.h"

#include "core/io/snapshot_frames.h"

#include <array>
#include <string_view>
#include <unordered_map>

namespace matmulviz::snapshot {

namespace {

using C = MemoryCategory;

/// A rule on one frame: `file` a part of its filename ("" any), `name` its function, exact or,
/// ending in '*', a prefix ("*" any). Matches a stack when any of its frames matches.
struct FrameRule {
  MemoryCategory category;
  std::string_view file;
  std::string_view name;
  std::string_view reason;
};

constexpr std::array kFrameRules{
    FrameRule{C::CublasWorkspace, "", "at::cuda::setWorkspaceForHandle*",
              "cuBLAS's handle setup (at::cuda::setWorkspaceForHandle): the workspace a cuBLAS "
              "handle takes on its first use, kept for the life of the process"},
    FrameRule{C::CublasWorkspace, "", "at::cuda::getCUDABlasLtWorkspace*",
              "cuBLASLt's workspace (at::cuda::getCUDABlasLtWorkspace), kept for the life of the "
              "process"},
    FrameRule{C::Gradients, "", "torch::autograd::Engine::*",
              "a frame of the autograd engine (torch::autograd::Engine)"},
    FrameRule{C::Gradients, "", "torch::autograd::generated::*",
              "a generated backward node (torch::autograd::generated)"},
    FrameRule{C::Gradients, "torch/autograd/__init__.py", "backward", "torch.autograd.backward"},
    FrameRule{C::Gradients, "torch/autograd/__init__.py", "grad", "torch.autograd.grad"},
    FrameRule{C::Gradients, "torch/autograd/graph.py", "_engine_run_backward",
              "torch/autograd/graph.py _engine_run_backward"},
    FrameRule{C::Gradients, "", "backward", "a frame named backward"},
    FrameRule{C::OptimizerState, "torch/optim/", "_init_group",
              "a frame in torch/optim/ named _init_group: an optimizer's state, made on its "
              "first step"},
    FrameRule{C::Parameter, "torch/nn/modules/module.py", "_apply",
              "Module._apply (torch/nn/modules/module.py): a module's parameters or buffers "
              "moved by .to() or .cuda()"},
    FrameRule{C::Parameter, "torch/nn/modules/", "__init__",
              "a module's __init__ (torch/nn/modules/): a parameter made with its module"},
    FrameRule{C::Parameter, "torch/nn/modules/", "reset_parameters",
              "a module's reset_parameters (torch/nn/modules/)"},
};

constexpr std::string_view kOptim = "torch/optim/";
constexpr std::string_view kOptimRule = "a frame in torch/optim/: made by an optimizer step";

/// A rule on the innermost dispatcher frame's op (at::_ops::<op>::...).
struct OpRule {
  MemoryCategory category;
  std::array<std::string_view, 8> ops;  // "" pads
  std::string_view reason;
};

constexpr std::array kOpRules{
    OpRule{C::GatheredCopy,
           {"index", "index_Tensor", "index_select", "gather", "embedding"},
           "the result of a gather (at::_ops::%s)"},
    OpRule{C::Outputs,
           {"mm", "bmm", "matmul", "addmm", "baddbmm", "addbmm", "linear", "einsum"},
           "the result of a matrix multiplication (at::_ops::%s)"},
};

/// PyTorch 2.x's cuBLAS workspace on sm_90 (measured on an H200 with PyTorch 2.11).
constexpr int64_t kWorkspaceBytes = int64_t{32} << 20;

bool nameMatches(std::string_view pattern, std::string_view name) {
  if (!pattern.empty() && pattern.back() == '*')
    return name.starts_with(pattern.substr(0, pattern.size() - 1));
  return name == pattern;
}

bool frameMatches(const FrameRule& r, const Frame& f) {
  return (r.file.empty() || f.filename.find(r.file) != std::string::npos) &&
         nameMatches(r.name, f.name);
}

bool anyFrameIn(const MemorySnapshot& s, StackId stack, std::string_view file) {
  if (stack >= s.stacks.size()) return false;
  for (const uint32_t id : s.stacks[stack])
    if (s.frames[id].filename.find(file) != std::string::npos) return true;
  return false;
}

bool underTorch(const Frame& f) {
  return f.filename.find("/torch/") != std::string::npos || f.filename.starts_with("torch/");
}

/// The frame rules; the rule is empty when none matched.
CategoryChoice byFrames(const MemorySnapshot& s, StackId stack) {
  if (stack >= s.stacks.size()) return {};
  const auto& frames = s.stacks[stack];
  for (const FrameRule& r : kFrameRules)
    for (const uint32_t id : frames)
      if (frameMatches(r, s.frames[id])) return {r.category, std::string(r.reason)};
  if (anyFrameIn(s, stack, kOptim)) return {C::OptimizerState, std::string(kOptimRule)};
  const std::string_view op = innermostOp(s, frames);
  if (op.empty()) return {};
  for (const OpRule& r : kOpRules)
    for (const std::string_view o : r.ops)
      if (!o.empty() && o == op) {
        std::string reason(r.reason);
        reason.replace(reason.find("%s"), 2, op);
        return {r.category, reason};
      }
  return {};
}

}  // namespace

BlockCategorizer::BlockCategorizer(const MemorySnapshot& snapshot, size_t device)
    : s_(snapshot), trace_(device < snapshot.traces.size() ? &snapshot.traces[device] : nullptr) {
  pythonOnly_ = !s_.frames.empty();
  for (const Frame& f : s_.frames)
    if (isCppFrame(f)) pythonOnly_ = false;
  if (!pythonOnly_ || !trace_) return;
  // The first 32 MiB allocation of each thread (no frames: the autograd engine's; frames: the
  // program's), when it is alive at the end.
  std::unordered_map<int64_t, int64_t> live;  // address -> its 'alloc'
  int64_t first[2] = {-1, -1};
  for (size_t x = 0; x < trace_->count(); ++x) {
    const auto ix = static_cast<int64_t>(x);
    if (trace_->action[x] == TraceAction::Alloc) {
      live[trace_->addr[x]] = ix;
      const int thread = s_.stacks.at(trace_->stack[x]).empty() ? 0 : 1;
      if (trace_->size[x] == kWorkspaceBytes && first[thread] < 0) first[thread] = ix;
    } else if (trace_->action[x] == TraceAction::FreeCompleted) {
      live.erase(trace_->addr[x]);
    }
  }
  for (const auto& [addr, x] : live)
    if (x == first[0] || x == first[1]) workspaceAllocs_.insert(x);
}

CategoryChoice BlockCategorizer::categorize(const BlockLife& b) const {
  const bool traced = trace_ && b.allocEvent >= 0 && size_t(b.allocEvent) < trace_->count();
  const bool freed = trace_ && b.freeEvent >= 0 && size_t(b.freeEvent) < trace_->count();
  const StackId freeStack = freed ? trace_->stack[size_t(b.freeEvent)] : 0;
  const bool noFrames = b.stack >= s_.stacks.size() || s_.stacks[b.stack].empty();
  const bool freedWithoutFrames =
      freed && (freeStack >= s_.stacks.size() || s_.stacks[freeStack].empty());
  CategoryChoice frames = byFrames(s_, b.stack);
  if (frames.rule == kOptimRule && freed && anyFrameIn(s_, freeStack, kOptim))
    return {C::Temporary,
            "a frame in torch/optim/, freed under torch/optim/: working memory of an optimizer "
            "step"};
  if (!frames.rule.empty() || !pythonOnly_ || !traced) return frames;
  if (workspaceAllocs_.contains(b.allocEvent))
    return {C::CublasWorkspace,
            "32 MiB, the first of that size in its thread and alive at the end: PyTorch 2.x's "
            "cuBLAS workspace on sm_90 (by size: Python stacks do not show cuBLAS's frames)"};
  if (noFrames) {
    if (freedWithoutFrames)
      return {C::AutogradDetail,
              "no Python frame, freed without one: made and freed by the autograd engine's "
              "thread during backward"};
    return {C::Gradients,
            "no Python frame (the autograd engine's thread) and kept after the backward: a "
            "gradient such as a parameter's .grad"};
  }
  if (freedWithoutFrames)
    return {C::Activation,
            "made with Python frames, freed by the autograd engine's thread: saved for backward"};
  const Frame& made = s_.frames[s_.stacks[b.stack].front()];
  if (freed && freeStack < s_.stacks.size() && !s_.stacks[freeStack].empty()) {
    const Frame& gone = s_.frames[s_.stacks[freeStack].front()];
    if (gone.filename == made.filename && gone.name == made.name)
      return {C::Temporary, "freed in the function that made it (" + made.name + ")"};
  }
  bool torch = false;
  for (const uint32_t id : s_.stacks[b.stack]) torch = torch || underTorch(s_.frames[id]);
  if (!torch) return {C::Inputs, "made by the program's own line (no frame in torch/): an input"};
  return {C::Activation,
          "made under torch's Python code (the forward) and kept past the function that made it"};
}

MemoryCategory categoryOfStack(const MemorySnapshot& snapshot, StackId stack) {
  return byFrames(snapshot, stack).category;
}

std::string categoryReason(const MemorySnapshot& snapshot, StackId stack) {
  return byFrames(snapshot, stack).rule;
}

std::vector<MemoryCategory> categoriesOfStacks(const MemorySnapshot& snapshot) {
  std::vector<MemoryCategory> out(snapshot.stacks.size(), C::Other);
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = categoryOfStack(snapshot, static_cast<StackId>(i));
  return out;
}

std::string categoryRulesText() {
  std::string out = "Categories (the first rule that matches):\n";
  const auto line = [&](C c, std::string_view reason) {
    out += "  " + std::string(memoryCategoryName(c)) + ": " + std::string(reason) + "\n";
  };
  for (const FrameRule& r : kFrameRules) line(r.category, r.reason);
  line(C::Temporary, "a frame in torch/optim/, freed under torch/optim/");
  line(C::OptimizerState, "any other frame in torch/optim/");
  for (const OpRule& r : kOpRules) {
    std::string ops;
    for (const std::string_view o : r.ops)
      if (!o.empty()) ops += (ops.empty() ? "" : ", ") + std::string(o);
    std::string reason(r.reason);
    reason.replace(reason.find("%s"), 2, "{" + ops + "}");
    line(r.category, reason + ", the innermost op");
  }
  out += "Python stacks only (the autograd engine's thread has no Python frame):\n";
  line(C::CublasWorkspace, "32 MiB, first of its thread, alive at the end (by size)");
  line(C::AutogradDetail, "no frame, freed without a frame (inside backward)");
  line(C::Gradients, "no frame, kept after the backward (.grad)");
  line(C::Activation, "freed by the autograd engine's thread (saved for backward)");
  line(C::Temporary, "freed in the function that made it");
  line(C::Inputs, "no frame in torch/ (the program's own line)");
  line(C::Activation, "any other block made under torch's Python code");
  return out + "  anything else: other";
}

}  // namespace matmulviz::snapshot
