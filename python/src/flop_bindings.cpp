// matmulviz._C._FlopCounter: core's FlopCounter (core/ops/flop_counter.h) for
// matmulviz.torch.utils.flop_counter.FlopCounterMode, which gives it PyTorch's API.
#include "core/ops/flop_counter.h"
#include "python/src/bindings.h"

#include <pybind11/stl.h>

#include <memory>

namespace py = pybind11;

namespace matmulviz::python {

namespace {

/// A FlopCounter started and stopped from Python (a context manager's __enter__ and __exit__):
/// counts FLOPs between start() and stop(), and keeps them after stop().
class ScopedFlopCounter {
 public:
  void start() {
    kept_.clear();
    counter_ = std::make_unique<FlopCounter>();
  }
  void stop() {
    if (!counter_) return;
    kept_ = counter_->counts();
    counter_.reset();
  }
  std::vector<std::pair<std::string, int64_t>> counts() const {
    return counter_ ? counter_->counts() : kept_;
  }

 private:
  std::unique_ptr<FlopCounter> counter_;
  std::vector<std::pair<std::string, int64_t>> kept_;
};

}  // namespace

void bindFlopCounter(py::module_& m) {
  py::class_<ScopedFlopCounter>(m, "_FlopCounter",
                                "core's FlopCounter: FLOPs per op while started (PyTorch's "
                                "FlopCounterMode formulas; one multiply-add = 2 FLOPs)")
      .def(py::init<>())
      .def("start", &ScopedFlopCounter::start, "Starts counting on this thread (clears counts).")
      .def("stop", &ScopedFlopCounter::stop, "Stops counting; the counts stay readable.")
      .def("counts", &ScopedFlopCounter::counts,
           "[(op name as 'aten.mm', FLOPs)] in the order each op was first counted.");
}

}  // namespace matmulviz::python
