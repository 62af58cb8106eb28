#pragma once
// Which frames of a PyTorch memory snapshot's stacks say something about the program, and which
// are the machinery that recorded them. Qt-free.
//
// A stack recorded with C++ frames (torch.cuda.memory._record_memory_history(stacks="all"))
// starts, innermost first, with the recorder's own frames (torch::unwind::unwind,
// torch::CapturedTraceback::gather, gather_with_cpp in memory_snapshot.cpp), then the caching
// allocator's (c10::cuda::CUDACachingAllocator::...::malloc and allocate), then the factory that
// asked for the memory (at::detail::empty_cuda...), the op, the dispatcher's wrappers, the
// Python interpreter and the program. PyTorch's viewer leaves out the recorder's frames, the
// dispatcher's registration and boxing code and the interpreter's (torch/cuda/_memory_viz.py,
// _frame_filter; torch/utils/viz/MemoryViz.js, frameFilter): memoryVizShows() is that filter.
// isMachineryFrame() adds the allocator's own frames, which no viewer needs to name a block by.

#include "core/io/memory_snapshot.h"

#include <string>
#include <string_view>
#include <vector>

namespace matmulviz::snapshot {

/// PyTorch's viewer's filter: false for the unwinder's and recorder's frames (unwind::unwind,
/// CapturedTraceback::gather, gather_with_cpp), the dispatcher's registration and boxing code
/// (files core/boxing, /Register, /Redispatch) and the interpreter's (PyEval_, PyObject_,
/// ceval.c, ...), true for every other frame.
bool memoryVizShows(const Frame& frame);

/// True for a frame that only records or hands out the memory: what memoryVizShows leaves out,
/// the caching allocator's own frames (c10::cuda::CUDACachingAllocator, CUDACachingAllocator.cpp)
/// and the dispatcher's generated registration files written without a folder
/// ("RegisterCUDA_0.cpp", as stacks symbolised without source paths name them).
bool isMachineryFrame(const Frame& frame);

/// True for a Python frame (its file ends in ".py").
bool isPythonFrame(const Frame& frame);

/// True when the frame is a C++ frame: a function name with "::" or no source file ("??", "").
bool isCppFrame(const Frame& frame);

/// The innermost dispatcher op of `frames` (innermost first) that is not a factory only making
/// the memory another op asked for (empty*, new_empty*, zeros*, resize_): "index_Tensor" for a
/// frame at::_ops::index_Tensor::call(...); empty when the stack has no such frame (Python-only
/// stacks). PyTorch's stacks hold at::_ops::<op>::call for every op called through the
/// dispatcher, so an op that calls another (matmul calls mm) gives the inner one.
std::string_view innermostOp(const MemorySnapshot& snapshot, const std::vector<uint32_t>& frames);

/// The name of the op that allocated with stack `frames` (innermost first; not empty), as the
/// Memory view's op column shows it: the innermost dispatcher op (innermostOp) when the stack
/// has C++ frames, else the function of labelFrame (a Python function: "forward", "linear").
std::string opName(const MemorySnapshot& snapshot, const std::vector<uint32_t>& frames);

/// A frame as a label names a place: "train.py:42" (the file's last component and the line);
/// a C++ frame recorded without a line (PyTorch's unwinder reports 0) is its file alone,
/// "Blas.cpp", not "Blas.cpp:0".
std::string frameLabel(const Frame& frame);

}  // namespace matmulviz::snapshot
