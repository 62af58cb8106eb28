// matmulviz._C: the engine (core/) as a CPython extension. Binding code only; the op logic is
// core's, and matmulviz/torch/ gives it PyTorch's names and argument forms.
#include "python/src/bindings.h"
#include "python/src/errors.h"

PYBIND11_MODULE(_C, m) {
  m.doc() = "matmulviz's engine: PyTorch's tensor, autograd and CUDA caching-allocator rules";
  matmulviz::python::bindErrors(m);
  matmulviz::python::bindTensor(m);
  matmulviz::python::bindIndexing(m);
  matmulviz::python::bindOps(m);
  matmulviz::python::bindCompare(m);
  matmulviz::python::bindAutograd(m);
  matmulviz::python::bindCuda(m);
  matmulviz::python::bindRecorder(m);
  matmulviz::python::bindFlopCounter(m);
  matmulviz::python::bindCompile(m);
  matmulviz::python::bindFusedOps(m);
  matmulviz::python::bindSimulate(m);
  matmulviz::python::bindSdpa(m);
}
