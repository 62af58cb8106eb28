#pragma once
// The parts of the extension module, each binding one area of PyTorch's API onto core/.

#include "python/src/tensor_type.h"

#include <pybind11/pybind11.h>

namespace matmulviz::python {

void bindTensor(pybind11::module_& m);       // tensor_bindings.cpp: the Tensor class
void bindIndexing(pybind11::module_& m);     // indexing.cpp: __getitem__, __setitem__
void bindOps(pybind11::module_& m);          // ops_bindings.cpp: creation and math functions
void bindCompare(pybind11::module_& m);      // compare_bindings.cpp: eq, ne, lt, le, gt, ge
void bindAutograd(pybind11::module_& m);     // autograd_bindings.cpp: grad_fn nodes, backward
void bindCuda(pybind11::module_& m);         // cuda_bindings.cpp: torch.cuda memory statistics
void bindRecorder(pybind11::module_& m);     // recorder.cpp: allocator events with Python frames
void bindFlopCounter(pybind11::module_& m);  // flop_bindings.cpp: FLOP counting
void bindCompile(pybind11::module_& m);      // compile_bindings.cpp: partitioner, compiled backward
void bindFusedOps(pybind11::module_& m);     // attention_bindings.cpp: fused attention ops, amax
void bindSimulate(pybind11::module_& m);     // simulate_bindings.cpp: the allocator for real torch
void bindSdpa(pybind11::module_& m);         // sdpa_bindings.cpp: attention's kernel choice

}  // namespace matmulviz::python
