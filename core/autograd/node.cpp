#include "core/autograd/node.h"

#include "core/autograd/accumulate_grad.h"
#include "core/autograd/grad_mode.h"

#include <atomic>
#include <stdexcept>

namespace matmulviz {

namespace {
std::atomic<uint64_t> nextSequenceNr{0};
thread_local bool gradEnabled = true;
}  // namespace

bool GradMode::isEnabled() {
  return gradEnabled;
}
void GradMode::setEnabled(bool enabled) {
  gradEnabled = enabled;
}

Node::Node() : sequenceNr(nextSequenceNr++) {}

namespace {

/// gatherFunctions of torch/csrc/autograd/function.cpp: release `fn`'s saved tensors, move the
/// next nodes held only by `fn` onto `stack`, drop its references to the others.
void gatherNextNodes(std::vector<Edge>& edges, std::vector<std::shared_ptr<Node>>& stack) {
  for (Edge& e : edges) {
    if (e.fn.use_count() == 1)
      stack.push_back(std::move(e.fn));
    else
      e.fn.reset();
  }
}

}  // namespace

Node::~Node() {
  // The derived node's saved tensors are gone already (its members die first), as PyTorch's
  // deleteNode calls release_variables() on the first node before anything else.
  std::vector<std::shared_ptr<Node>> stack;
  gatherNextNodes(nextEdges, stack);
  while (!stack.empty()) {
    std::shared_ptr<Node> fn = std::move(stack.back());
    stack.pop_back();
    fn->releaseSaved();
    gatherNextNodes(fn->nextEdges, stack);
  }  // each popped node is destroyed here, its next edges already empty
}

SavedTensor::SavedTensor(Tensor t, std::string why) : tensor_(std::move(t)), why_(std::move(why)) {
  if (!tensor_.defined()) return;
  tensor_.storage().addHolder(why_);
  version_ = tensor_.storage().version();
  if (const auto& fn = tensor_.gradFn())
    producer_ = ", which is output " + std::to_string(tensor_.outputNr()) + " of " + fn->name();
}

namespace {

/// "torch.FloatTensor", "torch.cuda.LongTensor": PyTorch's legacy type name of `t`.
std::string legacyTypeName(const Tensor& t) {
  return std::string(t.storage().device() ? "torch.cuda." : "torch.") +
         std::string(scalarTypeName(t.dtype())) + "Tensor";
}

}  // namespace

const Tensor& SavedTensor::get() const {
  if (tensor_.defined() && tensor_.storage().version() != version_) {
    std::string sizes;
    for (int64_t s : tensor_.sizes()) sizes += (sizes.empty() ? "" : ", ") + std::to_string(s);
    throw std::runtime_error(
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [" +
        legacyTypeName(tensor_) + " [" + sizes + "]]" + producer_ + ", is at version " +
        std::to_string(tensor_.storage().version()) + "; expected version " +
        std::to_string(version_) +
        " instead. Hint: enable anomaly detection to find the operation that failed to compute "
        "its gradient, with torch.autograd.set_detect_anomaly(True).");
  }
  return tensor_;
}

SavedTensor::~SavedTensor() {
  reset();
}

SavedTensor::SavedTensor(SavedTensor&& o) noexcept
    : tensor_(std::move(o.tensor_)),
      why_(std::move(o.why_)),
      version_(o.version_),
      producer_(std::move(o.producer_)) {
  o.tensor_ = Tensor();
}

SavedTensor& SavedTensor::operator=(SavedTensor&& o) noexcept {
  if (this != &o) {
    reset();
    tensor_ = std::move(o.tensor_);
    why_ = std::move(o.why_);
    version_ = o.version_;
    producer_ = std::move(o.producer_);
    o.tensor_ = Tensor();
  }
  return *this;
}

void SavedTensor::reset() {
  if (tensor_.defined()) tensor_.storage().removeHolder(why_);
  tensor_ = Tensor();
}

Edge gradientEdge(const Tensor& t) {
  if (!t.defined() || !t.requiresGrad()) return {};
  if (t.gradFn()) return {t.gradFn(), t.outputNr()};
  if (!t.impl()->requiresGrad) return {};  // a view made in no_grad mode: no grad accumulator
  auto acc = t.impl()->gradAccumulator.lock();
  if (!acc) {
    acc = std::make_shared<AccumulateGrad>(t);
    t.impl()->gradAccumulator = acc;
  }
  return {acc, 0};
}

bool anyRequiresGrad(std::initializer_list<const Tensor*> inputs) {
  if (!GradMode::isEnabled()) return false;
  for (const Tensor* t : inputs)
    if (t->defined() && t->requiresGrad()) return true;
  return false;
}

bool anyRequiresGrad(const TensorList& inputs) {
  if (!GradMode::isEnabled()) return false;
  for (const Tensor& t : inputs)
    if (t.defined() && t.requiresGrad()) return true;
  return false;
}

void setHistory(const Tensor& output, const std::shared_ptr<Node>& node, uint32_t outputNr) {
  output.impl()->gradFn = node;
  output.impl()->outputNr = outputNr;
  output.impl()->requiresGrad = true;
}

std::string savedWhy(const std::string& role, const std::string& node, const Tensor& needing) {
  std::string who = needing.label();
  if (who.empty()) who = "the other operand";
  return "saved as " + role + " of " + node + " because " + who + " requires grad";
}

}  // namespace matmulviz
