#pragma once
// Conversions between Python values and the engine's: shapes given as PyTorch accepts them
// (`view(2, 3)`, `view((2, 3))`, `view([2, 3])`, a torch.Size), dtypes, and host tensors from
// NumPy arrays and back.

#include "core/tensor/tensor.h"
#include "python/src/tensor_type.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

namespace matmulviz::python {

/// A shape from *args: one sequence argument, or the sizes as separate ints. Throws TypeError
/// (pybind11::type_error) in PyTorch's words for anything else: "view(): argument 'size' must be
/// tuple of SymInts, but found element of type float at pos 2" (`argument` names the parameter,
/// `kind` is "SymInts" or "ints" as in PyTorch's signature of `function`).
Shape shapeFromArgs(const pybind11::args& args, const char* function, const char* argument = "size",
                    const char* kind = "SymInts");
/// A shape from one Python sequence of ints.
Shape shapeFromSequence(pybind11::handle sequence, const char* function,
                        const char* argument = "size", const char* kind = "SymInts");
/// A Python tuple of ints.
pybind11::tuple toTuple(const Shape& sizes);

/// A host tensor holding a copy of `array` (float64, float32, float16, int64; C order or not).
/// Throws TypeError for other NumPy dtypes, as torch.from_numpy does.
Tensor fromNumpy(const pybind11::array& array);
/// A NumPy array copying a host tensor's elements (float16 as numpy.float16, bfloat16 refused
/// as PyTorch refuses it). Throws TypeError for a CUDA tensor, with PyTorch's message.
pybind11::array toNumpy(const Tensor& t);

}  // namespace matmulviz::python
