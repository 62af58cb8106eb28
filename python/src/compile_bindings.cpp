// What matmulviz.torch.compile(f, backend="aot_eager_decomp_partition") needs from C++:
//   _JointGraph       core/partitioner's JointGraph and BudgetPlanner over a traced joint graph
//                     (the min cut, the budget's knapsack: PyTorch's partitioner,
//                     docs/partitioner.md);
//   _attach_compiled_backward   makes a tensor the output of a node whose backward is a Python
//                     callable (PyTorch's CompiledFunctionBackward: the compiled backward graph);
//   _FlopsNotCounted  a scope in which the engine's ops add no FLOPs (tracing runs f once);
//   threshold_backward  relu's backward as an op of its own (aten.threshold_backward).
#include "core/autograd/engine.h"
#include "core/autograd/node.h"
#include "core/ops/flop_counter.h"
#include "core/ops/pointwise.h"
#include "core/partitioner/budget.h"
#include "core/partitioner/graph_json.h"
#include "core/partitioner/joint_graph.h"
#include "core/partitioner/op_types.h"
#include "python/src/bindings.h"

#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace py = pybind11;

namespace matmulviz::python {

namespace {

namespace part = matmulviz::partitioner;

/// One traced node as Python describes it: (kind, op, args, bytes, flops, tuple). kind is
/// "primal", "parameter", "tangent" or "call"; args are earlier node ids (call nodes only).
using NodeSpec = std::tuple<std::string, std::string, std::vector<int32_t>, int64_t, int64_t, bool>;

part::JointGraph buildGraph(const std::vector<NodeSpec>& nodes, const std::vector<int32_t>& fwd,
                            const std::vector<int32_t>& grads) {
  part::JointGraphBuilder b;
  for (const auto& [kind, op, args, bytes, flops, tuple] : nodes) {
    if (kind == "primal" || kind == "parameter") {
      b.primal(bytes, kind == "parameter");
    } else if (kind == "tangent") {
      b.tangent(bytes);
    } else if (kind == "cse") {  // merged into an equal node: only its name is taken
      b.skipName(op);
    } else if (kind == "call") {
      if (tuple) {
        b.tupleCall(op, args, bytes, flops);
      } else {
        part::CallOptions o;
        o.flops = flops;
        b.call(op, args, bytes, std::move(o));
      }
    } else {
      throw std::invalid_argument("_JointGraph: unknown node kind '" + kind + "'");
    }
  }
  b.output(fwd, grads);
  return b.build();
}

/// A joint graph and its planner (the planner refers to the graph: neither moves).
class PlannedGraph {
 public:
  PlannedGraph(const std::vector<NodeSpec>& nodes, const std::vector<int32_t>& fwd,
               const std::vector<int32_t>& grads)
      : graph_(buildGraph(nodes, fwd, grads)), planner_(graph_) {}
  PlannedGraph(const PlannedGraph&) = delete;
  PlannedGraph& operator=(const PlannedGraph&) = delete;

  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const part::Node& n : graph_.nodes()) out.push_back(n.name);
    return out;
  }

  py::dict plan(double budget, const std::string& solver) {
    if (solver != "dp" && solver != "greedy")
      throw std::invalid_argument(
          "activation_memory_budget_solver must be 'dp' or 'greedy', got '" + solver + "'");
    const part::BudgetPlan p = planner_.plan(
        budget, solver == "dp" ? part::KnapsackSolver::Dp : part::KnapsackSolver::Greedy);
    py::dict d;
    d["budget"] = p.budget;
    d["route"] = std::string(part::planRouteName(p.route));
    d["saved"] = p.saved;
    d["saved_used"] = p.savedUsed;
    d["recomputed"] = p.recomputed;
    d["saved_bytes"] = p.savedBytes;
    d["activation_bytes"] = p.activationBytes;
    d["recompute_flops"] = p.recomputeFlops;
    d["backward_flops"] = p.backwardFlops;
    d["memory_ratio"] = p.memoryRatio;
    d["candidates"] = p.candidates;
    d["knapsack_unbanned"] = p.knapsackUnbanned;
    return d;
  }

  /// The graph file (kind "budget-graph", docs/partitioner.md) as JSON text.
  std::string toJson(const std::string& title, const std::string& script,
                     const std::string& function) const {
    return part::graphToJson(graph_, {title, script, function}).dump(1);
  }

  /// Per node: required_fw (the forward graph the outputs need).
  std::vector<bool> requiredFw() const {
    std::vector<bool> out;
    for (part::NodeId n = 0; n < graph_.size(); ++n) out.push_back(planner_.info().isRequiredFw(n));
    return out;
  }

 private:
  part::JointGraph graph_;
  part::BudgetPlanner planner_;
};

/// PyTorch's CompiledFunctionBackward: the output's node. It holds the values the partitioner
/// saved (SavedTensor: reports say why their storage is alive; exposed as grad_fn._saved_<name>)
/// and a Python callable, the compiled backward, called as backward(grad, [saved values]) and
/// returning one gradient or None per input.
class CompiledFunctionBackward final : public Node {
 public:
  CompiledFunctionBackward(py::function backward,
                           const std::vector<std::pair<std::string, Tensor>>& saved)
      : backward_(std::make_unique<py::function>(std::move(backward))) {
    for (const auto& [name, t] : saved) {
      names_.push_back(name);
      saved_.emplace_back(t, "saved as " + name +
                                 " of CompiledFunctionBackward (the partitioner's "
                                 "plan)");
    }
  }
  ~CompiledFunctionBackward() override { drop(); }
  std::string name() const override { return "CompiledFunctionBackward"; }
  TensorList apply(TensorList&& grads) override {
    if (!backward_)
      throw std::logic_error(
          "Trying to backward through the graph a second time (or directly access saved "
          "tensors after they have already been freed). Saved intermediate values of the graph "
          "are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if "
          "you need to backward through the graph a second time or if you need to access saved "
          "tensors after calling backward.");
    py::gil_scoped_acquire gil;
    py::list saved;
    for (const SavedTensor& s : saved_) saved.append(py::cast(s.get()));
    // Without retain_graph the list is their only holder from here on, so the compiled backward
    // frees each after its last use (AOTAutograd: maybe_clear_saved_tensors, steal_args).
    if (!currentPassKeepsGraph())
      for (SavedTensor& s : saved_) s.reset();
    const py::object result =
        (*backward_)(grads.empty() ? py::none() : py::cast(grads[0]), std::move(saved));
    TensorList out;
    for (const py::handle item : result)
      out.push_back(item.is_none() ? Tensor() : item.cast<Tensor>());
    if (out.size() != nextEdges.size())
      throw std::logic_error("CompiledFunctionBackward: the backward returned " +
                             std::to_string(out.size()) + " gradients for " +
                             std::to_string(nextEdges.size()) + " inputs");
    return out;
  }
  /// Frees the saved values and the compiled backward (retain_graph=False).
  void releaseSaved() override {
    for (SavedTensor& s : saved_) s.reset();
    drop();
    savedReleased = true;
  }
  std::vector<std::pair<std::string, Tensor>> savedTensors() const override {
    std::vector<std::pair<std::string, Tensor>> out;
    for (size_t i = 0; i < saved_.size(); ++i)
      out.emplace_back(names_[i], saved_[i].defined() ? saved_[i].get() : Tensor());
    return out;
  }

 private:
  void drop() {
    if (!backward_) return;
    if (Py_IsInitialized()) {
      py::gil_scoped_acquire gil;
      backward_.reset();
    } else {
      (void)backward_.release();  // the interpreter is gone: leak rather than touch it
    }
  }
  std::unique_ptr<py::function> backward_;
  std::vector<std::string> names_;
  std::vector<SavedTensor> saved_;
};

/// Makes `out` (computed without autograd) the output of a CompiledFunctionBackward holding
/// `saved` (node name, value) whose gradients flow into `inputs` (an entry per input, in order;
/// inputs that do not require grad get no edge and their gradient is ignored).
void attachCompiledBackward(const Tensor& out, const std::vector<Tensor>& inputs,
                            py::function backward,
                            const std::vector<std::pair<std::string, Tensor>>& saved) {
  auto node = std::make_shared<CompiledFunctionBackward>(std::move(backward), saved);
  for (const Tensor& t : inputs) node->nextEdges.push_back(gradientEdge(t));
  setHistory(out, node);
}

/// A FlopsNotCounted scope entered and left from Python.
class FlopsPause {
 public:
  void enter() { scope_ = std::make_unique<FlopsNotCounted>(); }
  void exit() { scope_.reset(); }

 private:
  std::unique_ptr<FlopsNotCounted> scope_;
};

}  // namespace

void bindCompile(py::module_& m) {
  py::class_<PlannedGraph>(m, "_JointGraph",
                           "core/partitioner's joint graph and budget planner (PyTorch's "
                           "min_cut_rematerialization_partition and choose_saved_values_set)")
      .def(py::init<const std::vector<NodeSpec>&, const std::vector<int32_t>&,
                    const std::vector<int32_t>&>(),
           py::arg("nodes"), py::arg("forward_outputs"), py::arg("gradients"))
      .def("names", &PlannedGraph::names, "FX-style node names in graph order")
      .def("required_fw", &PlannedGraph::requiredFw, "per node: in the forward graph")
      .def("to_json", &PlannedGraph::toJson, py::arg("title"), py::arg("script") = "",
           py::arg("function") = "",
           "The graph file (report kind 'budget-graph', docs/partitioner.md) as JSON text")
      .def("plan", &PlannedGraph::plan, py::arg("budget"), py::arg("solver") = "dp",
           "The plan for a budget in [0, 1] (RuntimeError with PyTorch's text outside it): "
           "node ids saved/recomputed, bytes, FLOPs and the route.");
  m.def(
      "_partitioner_is_view_op", [](const std::string& op) { return part::isViewOp(op); },
      py::arg("op"), "Whether the partitioner's op classes have the aten op as a view");
  m.def("_check_memory_budget", &part::checkMemoryBudget, py::arg("budget"),
        "RuntimeError with PyTorch's text unless 0 <= budget <= 1");
  m.def("_attach_compiled_backward", &attachCompiledBackward, py::arg("out"), py::arg("inputs"),
        py::arg("backward"), py::arg("saved"));
  py::class_<FlopsPause>(m, "_FlopsNotCounted")
      .def(py::init<>())
      .def("__enter__", [](FlopsPause& p) { p.enter(); })
      .def("__exit__", [](FlopsPause& p, const py::args&) { p.exit(); });
  m.def("threshold_backward", &thresholdBackward, py::arg("grad"), py::arg("result"),
        "aten.threshold_backward(grad, result, 0): relu's backward");
}

}  // namespace matmulviz::python
