#include "python/src/errors.h"

#include "core/memory/caching_allocator.h"
#include "core/ops/pointwise.h"
#include "python/src/runtime.h"

#include <Python.h>

namespace py = pybind11;

namespace matmulviz::python {

NotSupported::NotSupported(const std::string& what)
    : std::logic_error(what +
                       " is not supported by matmulviz.torch; the supported functions are listed "
                       "in docs/python.md (or matmulviz.torch.supported())") {}

namespace {

PyObject* oomType = nullptr;

/// PyTorch's wording of a CUDA out-of-memory error (c10/cuda/CUDACachingAllocator.cpp,
/// DeviceCachingAllocator::malloc) for the PyTorch the model follows, from the allocator's
/// counters at the failed request. 2.x (as 2.11 words it): without the process's own line,
/// which PyTorch takes from NVML (the CUDA context's memory is not modelled); 1.x: as 1.13.
std::string pytorchOomMessage(const std::string& engineMessage) {
  const CachingAllocator& a = Runtime::instance().cuda()->allocator();
  if (a.ooms() == 0) return engineMessage;
  const int64_t total = a.options().capacityBytes.value_or(0);
  const MemoryCounters now = a.current();  // a failed allocation changes no counter
  const int64_t free = total - now.reservedBytes;
  if (a.options().pytorch.version == PyTorchVersion::V2)
    return "CUDA out of memory. Tried to allocate " + formatBytes(a.lastOomRequest()) +
           ". GPU 0 has a total capacity of " + formatBytes(total) + " of which " +
           formatBytes(free < 0 ? 0 : free) + " is free. Of the allocated memory " +
           formatBytes(now.allocatedBytes) + " is allocated by PyTorch, and " +
           formatBytes(now.reservedBytes - now.allocatedBytes) +
           " is reserved by PyTorch but unallocated. If reserved but unallocated memory is "
           "large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid "
           "fragmentation.  See documentation for Memory Management  "
           "(https://docs.pytorch.org/docs/stable/notes/cuda.html"
           "#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)";
  return "CUDA out of memory. Tried to allocate " + formatBytes(a.lastOomRequest()) + " (GPU 0; " +
         formatBytes(total) + " total capacity; " + formatBytes(now.allocatedBytes) +
         " already allocated; " + formatBytes(free < 0 ? 0 : free) + " free; " +
         formatBytes(now.reservedBytes) +
         " reserved in total by PyTorch) If reserved memory is >> allocated memory try setting "
         "max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and "
         "PYTORCH_CUDA_ALLOC_CONF";
}

}  // namespace

void bindErrors(py::module_& m) {
  static py::exception<OutOfMemoryError> oom(m, "OutOfMemoryError", PyExc_RuntimeError);
  oomType = oom.ptr();
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const OutOfMemoryError& e) {
      PyErr_SetString(oomType, pytorchOomMessage(e.what()).c_str());
    } catch (const NotSupported& e) {
      PyErr_SetString(PyExc_NotImplementedError, e.what());
    } catch (const NotSupportedError& e) {
      PyErr_SetString(PyExc_NotImplementedError, e.what());
    } catch (const std::out_of_range& e) {
      PyErr_SetString(PyExc_IndexError, e.what());
    } catch (const std::invalid_argument& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (const std::logic_error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
}

}  // namespace matmulviz::python
