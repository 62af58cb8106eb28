// Autograd from Python: grad_fn nodes (name(), next_functions, _saved_<name>), grad mode
// (no_grad and friends are Python context managers over set_grad_enabled), backward and
// torch.autograd.grad.
#include "core/autograd/accumulate_grad.h"
#include "core/autograd/engine.h"
#include "core/autograd/grad_mode.h"
#include "core/autograd/node.h"
#include "core/ops/ops.h"
#include "python/src/bindings.h"

#include <pybind11/stl.h>

#include <algorithm>

namespace py = pybind11;

namespace matmulviz::python {

void backwardFromPython(const Tensor& root, const std::optional<Tensor>& gradient,
                        bool retainGraph);

namespace {

py::tuple nextFunctions(const Node& node) {
  py::tuple out(node.nextEdges.size());
  for (size_t i = 0; i < node.nextEdges.size(); ++i) {
    const Edge& e = node.nextEdges[i];
    out[i] = py::make_tuple(e.fn ? py::cast(e.fn) : py::none(), e.inputNr);
  }
  return out;
}

py::object savedAttribute(const Node& node, const std::string& attr) {
  const std::string prefix = "_saved_";
  if (attr.rfind(prefix, 0) == 0) {
    const std::string name = attr.substr(prefix.size());
    const auto saved = node.savedTensors();
    // A list PyTorch saves (IndexBackward0's indices with several index tensors): a tuple.
    py::list several;
    for (const auto& [slot, t] : saved)
      if (slot == name) several.append(t.defined() ? py::cast(t) : py::none());
    if (several.size() > 1) return py::tuple(several);
    for (const auto& [slot, t] : saved) {
      if (slot != name) continue;
      if (!t.defined()) {
        if (node.savedReleased)
          throw std::logic_error(
              "Trying to backward through the graph a second time (or directly access saved "
              "tensors after they have already been freed). Saved intermediate values of the "
              "graph are freed when you call .backward() or autograd.grad(). Specify "
              "retain_graph=True if you need to backward through the graph a second time or if "
              "you need to access saved tensors after calling backward.");
        return py::none();
      }
      return py::cast(t);
    }
  }
  throw py::attribute_error("'" + node.name() + "' object has no attribute '" + attr + "'");
}

/// torch.autograd.grad for one output.
std::vector<std::optional<Tensor>> grad(const Tensor& output, const std::vector<Tensor>& inputs,
                                        const std::optional<Tensor>& gradOutput, bool retainGraph,
                                        bool allowUnused) {
  if (!output.requiresGrad())  // before the implicit gradient, as in PyTorch
    throw std::logic_error(
        "element 0 of tensors does not require grad and does not have a grad_fn");
  Tensor g;
  if (gradOutput) {
    g = *gradOutput;
  } else {
    if (output.numel() != 1)
      throw std::logic_error("grad can be implicitly created only for scalar outputs");
    OpScope op(output.device(), "ones_like");
    // grad_output is gradient memory (core/memory/memory_category.h), as the engine's own.
    g = empty(output.sizes(), output.dtype(), output.storage().devicePtr(), "grad_output (ones)")
            .setCategory(MemoryCategory::Gradients);
    if (g.hasData()) copyInto(g, fromDoubles(output.sizes(), {1.0}, output.dtype()));
  }
  const TensorList grads = runGrad(output, g, inputs, retainGraph);
  std::vector<std::optional<Tensor>> out;
  for (const Tensor& t : grads) {
    if (!t.defined() && !allowUnused)
      throw std::logic_error(
          "One of the differentiated Tensors appears to not have been used in the graph. Set "
          "allow_unused=True if this is the desired behavior.");
    out.push_back(t.defined() ? std::optional<Tensor>(t) : std::nullopt);
  }
  return out;
}

}  // namespace

void bindAutograd(py::module_& m) {
  py::class_<Node, std::shared_ptr<Node>>(m, "Node")
      .def("name",
           [](const Node& n) {
             // PyTorch names the C++ class of the leaves' node with its namespace.
             if (dynamic_cast<const AccumulateGrad*>(&n))
               return std::string("torch::autograd::AccumulateGrad");
             std::string name = n.name();
             if (name == "CopySlices") return "torch::autograd::" + name;
             return name;
           })
      .def_property_readonly("next_functions", &nextFunctions)
      .def_property_readonly(
          "variable",
          [](const Node& n) -> py::object {
            if (auto* acc = dynamic_cast<const AccumulateGrad*>(&n))
              return py::cast(acc->variable());
            throw py::attribute_error("'" + n.name() + "' object has no attribute 'variable'");
          })
      .def_property_readonly("_saved_names",
                             [](const Node& n) {
                               std::vector<std::string> names;
                               for (const auto& [slot, t] : n.savedTensors())
                                 if (std::find(names.begin(), names.end(), slot) == names.end())
                                   names.push_back(slot);
                               return names;
                             })
      .def("__getattr__", &savedAttribute)
      .def("__repr__", [](const Node& n) {
        return "<" + n.name() + " object at " +
               std::to_string(reinterpret_cast<std::uintptr_t>(&n)) + ">";
      });

  m.def("is_grad_enabled", &GradMode::isEnabled);
  m.def("set_grad_enabled", &GradMode::setEnabled);
  m.def("_backward", &backwardFromPython, py::arg("tensor"), py::arg("gradient") = py::none(),
        py::arg("retain_graph") = false);
  m.def("_grad", &grad, py::arg("output"), py::arg("inputs"), py::arg("grad_output"),
        py::arg("retain_graph"), py::arg("allow_unused"));
}

}  // namespace matmulviz::python
