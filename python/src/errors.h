#pragma once
// How the engine's C++ exceptions reach Python: as the exception types PyTorch raises, with
// PyTorch's messages where the engine has them.
//   std::out_of_range             -> IndexError   (bad index or dim, as PyTorch's IndexError)
//   std::invalid_argument, logic  -> RuntimeError (PyTorch's shape and argument errors)
//   OutOfMemoryError              -> torch.cuda.OutOfMemoryError (a RuntimeError), PyTorch's text
//   NotSupported (below)          -> NotImplementedError naming the function
//   NotSupportedError (core: an op without a primitive on a device's compute backend)
//                                 -> NotImplementedError naming the op and the backend

#include <pybind11/pybind11.h>

#include <stdexcept>
#include <string>

namespace matmulviz::python {

/// A PyTorch function or argument form matmulviz does not provide. The message names it and
/// points to the list of what is supported (docs/python.md).
class NotSupported : public std::logic_error {
 public:
  explicit NotSupported(const std::string& what);
};

/// Registers the translators and the OutOfMemoryError type on the extension module.
void bindErrors(pybind11::module_& m);

}  // namespace matmulviz::python
