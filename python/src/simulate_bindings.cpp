// The simulated CUDA device's caching-allocator model as a plain allocator, for
// matmulviz.simulate: real PyTorch runs the program on data-less tensors and asks this model for
// every block its CUDA tensors would take (python/matmulviz/simulate/). The blocks go through the
// same CachingAllocator (core/memory/caching_allocator.h) as matmulviz.torch's tensors, so the
// recorder, memory_stats() and the report see them alike.
#include "core/memory/cublas_workspace.h"
#include "core/memory/op_outputs.h"
#include "core/ops/gemm_kernel.h"
#include "python/src/bindings.h"
#include "python/src/runtime.h"

#include <pybind11/stl.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

namespace py = pybind11;

namespace matmulviz::python {

namespace {

MemoryCategory categoryNamed(const std::string& name) {
  const auto c = memoryCategoryFromName(name);
  if (!c)
    throw std::invalid_argument("unknown memory category \"" + name +
                                "\" (core/memory/memory_category.h: parameter, optimizer state, "
                                "inputs, activation, gradients, temporary, autograd detail, "
                                "other, ...)");
  return *c;
}

py::list segmentsAsSnapshot(const CachingAllocator& allocator) {
  py::list out;
  for (const CachingAllocator::SegmentLayout& s : allocator.segmentLayout()) {
    py::list blocks;
    int64_t allocated = 0, active = 0, requested = 0;
    for (const auto& b : s.blocks) {
      py::dict block;
      block["address"] = b.address;
      block["size"] = b.size;
      block["requested_size"] = b.requested;
      block["state"] = b.allocated     ? "active_allocated"
                       : b.pendingFree ? "active_pending_free"
                                       : "inactive";
      block["frames"] = py::list();
      block["allocation_id"] = b.allocationId;
      blocks.append(std::move(block));
      if (b.allocated) allocated += b.size;
      if (b.allocated || b.pendingFree) active += b.size, requested += b.requested;
    }
    py::dict segment;
    segment["device"] = 0;
    segment["address"] = s.address;
    segment["total_size"] = s.size;
    segment["allocated_size"] = allocated;
    segment["active_size"] = active;
    segment["requested_size"] = requested;
    segment["stream"] = s.stream;
    segment["segment_type"] = s.small ? "small" : "large";
    segment["segment_pool_id"] = py::make_tuple(0, 0);
    segment["is_expandable"] = false;
    segment["frames"] = py::list();
    segment["blocks"] = std::move(blocks);
    out.append(std::move(segment));
  }
  return out;
}

}  // namespace

void bindSimulate(py::module_& m) {
  m.def(
      "_sim_allocate",
      [](int64_t requestedBytes, const std::string& label) {
        if (requestedBytes < 0) throw std::invalid_argument("_sim_allocate: negative size");
        const CachingAllocator::Allocation a = cudaAllocator().allocate(requestedBytes, label);
        return std::make_pair(a.id, a.blockBytes);
      },
      "Allocates `requested_bytes` on the simulated CUDA device's caching-allocator model under "
      "the current op; returns (allocation id, block bytes). Raises OutOfMemoryError with "
      "PyTorch's message.");
  m.def(
      "_sim_segments", [] { return segmentsAsSnapshot(cudaAllocator()); },
      "The model's segments now, as torch.cuda.memory_snapshot() lists a real allocator's "
      "(c10/cuda/CUDACachingAllocator.cpp, snapshot): dicts with device, address, total_size, "
      "allocated_size, active_size, requested_size, stream, segment_type ('small' or 'large'), "
      "segment_pool_id, is_expandable, frames and blocks (address, size, requested_size, state "
      "'active_allocated', 'active_pending_free' or 'inactive', frames, and allocation_id, the "
      "model's own), addresses the model's virtual ones, stream the simulated stream's id; sizes "
      "in bytes.");
  m.def(
      "_sim_set_stream", [](int64_t stream) { return cudaAllocator().setStream(stream); },
      py::arg("stream"),
      "The simulated stream the next allocations are made on (torch.cuda.current_stream(); 0 is "
      "the default stream); returns the previous one. A cached block is reused only on its own "
      "stream (core/memory/caching_allocator.h).");
  m.def(
      "_sim_record_stream",
      [](int64_t id, int64_t stream) { cudaAllocator().recordStream(id, stream); }, py::arg("id"),
      py::arg("stream"),
      "Tensor.record_stream: live allocation `id` is used on `stream` too, so its block is not "
      "reused after a free until the host waited for that stream.");
  m.def(
      "_sim_synchronize",
      [](std::optional<int64_t> stream) {
        if (stream)
          cudaAllocator().synchronizeStream(*stream);
        else
          cudaAllocator().synchronize();
      },
      py::arg("stream") = std::nullopt,
      "The host waited for `stream` (None: every stream, torch.cuda.synchronize()): blocks freed "
      "while that stream used them return to the cache at the next allocation.");
  m.def(
      "_sim_block_address", [](int64_t id) { return cudaAllocator().blockAddress(id); },
      "The virtual address of live allocation `id`'s block in the model; -1 if not live.");
  m.def(
      "_sim_free", [](int64_t id) { cudaAllocator().free(id); },
      "Returns block `id` to the cache (the last reference to its storage died).");
  m.def(
      "_sim_set_label",
      [](int64_t id, const std::string& label) { cudaAllocator().setLabel(id, label); },
      "Renames allocation `id`.");
  m.def(
      "_sim_set_category",
      [](int64_t id, const std::string& name) {
        cudaAllocator().setCategory(id, categoryNamed(name));
      },
      "Says what allocation `id` holds (a memory category's name).");
  m.def(
      "_sim_set_default_category",
      [](const std::string& name) {
        return std::string(
            memoryCategoryName(cudaAllocator().setDefaultCategory(categoryNamed(name))));
      },
      "The category of the allocations made from now on; returns the previous one.");
  m.def(
      "_sim_holder",
      [](int64_t id, const std::string& why, int delta) {
        cudaAllocator().notifyHolder(id, why, delta);
      },
      "Something besides a variable starts (+1) or stops (-1) keeping allocation `id` alive.");
  m.def(
      "_sim_push_op", [](const std::string& name) { cudaAllocator().pushOp(name); },
      "The op that the next allocations belong to (pair with _sim_pop_op).");
  m.def("_sim_pop_op", [] { cudaAllocator().popOp(); });
  m.def(
      "_sim_use_cublas_handle",
      [](bool autogradThread, bool lt) -> std::optional<std::pair<int64_t, int64_t>> {
        std::optional<AutogradThreadScope> scope;
        if (autogradThread) scope.emplace();
        CachingAllocator& a = cudaAllocator();
        const int thread = static_cast<int>(currentCudaThread());
        const int slot = lt ? kCudaThreadCount + thread : thread;
        const bool had = a.cublasWorkspace(slot).has_value();
        const int64_t id = lt ? useCublasLtHandle(a) : useCublasHandle(a);
        if (had || id < 0) return std::nullopt;
        return std::make_pair(id, a.record(id).blockBytes);
      },
      py::arg("autograd_thread"), py::arg("lt") = false,
      "What an op that calls cuBLAS (`lt`: cuBLASLt) does first (core/memory/cublas_workspace.h, "
      "the rule the engine's matmuls follow): under PyTorch 2.x the first such op on the main "
      "thread, or on the autograd engine's thread (`autograd_thread`: inside a backward), "
      "allocates that thread's workspace, kept for the life of the process (cuBLASLt: the cuBLAS "
      "handle's first, when it has none yet). Returns (allocation id, block bytes) of the "
      "workspace `lt` names when this call allocated it, else None. Raises OutOfMemoryError.");
  m.def("addmm_uses_cublaslt", &addmmUsesCublasLt, py::arg("self_dims"), py::arg("self_size"),
        py::arg("self_contiguous"), py::arg("result_contiguous"), py::arg("beta"),
        py::arg("floating"), py::arg("mat2_rows"), py::arg("mat2_cols"),
        "Whether addmm runs on cuBLASLt (core/memory/cublas_workspace.h).");
  m.def("host_output_positions", &hostOutputPositions, py::arg("op"),
        "The positions of the outputs of aten op `op` that PyTorch's CUDA kernel makes on the "
        "host (core/memory/op_outputs.h): no device block.");
  m.def("output_allocation_order", &outputAllocationOrder, py::arg("op"),
        "The positions of the outputs of aten op `op` in the order PyTorch's CUDA kernel "
        "allocates them, where it differs from their order (core/memory/op_outputs.h); empty "
        "otherwise.");
  m.def("_blas_compatible", &detail::blasCompatible, py::arg("rows"), py::arg("cols"),
        py::arg("row_stride"), py::arg("col_stride"),
        "Whether a [rows, cols] matrix with these strides (elements) is a BLAS operand as it is; "
        "else the engine's mm/bmm copy it contiguous first, as PyTorch's "
        "prepare_matrix_for_cublas does (core/ops/gemm_kernel.h).");
}

}  // namespace matmulviz::python
