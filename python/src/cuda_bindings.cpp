// torch.cuda's memory functions over the simulated device's caching-allocator model, with
// PyTorch's names and memory_stats() keys (c10/cuda/CUDACachingAllocator.h, DeviceStats).
#include "python/src/bindings.h"
#include "python/src/runtime.h"

#include "core/memory/attention_temporaries.h"
#include "core/memory/cublas_workspace.h"
#include "core/memory/kernel_temporaries.h"
#include "core/memory/reduction_temporaries.h"
#include "core/memory/sort_temporaries.h"

#include <pybind11/stl.h>

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace py = pybind11;

namespace matmulviz::python {

namespace {

/// (label, bytes, freed step or -1) per step, as core/memory/kernel_temporaries.h lists them.
std::vector<std::tuple<std::string, int64_t, int>> temporarySteps(
    const std::vector<TemporaryStep>& steps) {
  std::vector<std::tuple<std::string, int64_t, int>> out;
  for (const TemporaryStep& s : steps) out.emplace_back(s.label, s.bytes, s.freeStep);
  return out;
}

/// The architecture of GPU key `gpu` ("h200"); std::invalid_argument (ValueError) for another.
const GpuArchitecture& architectureOf(const std::string& gpu) {
  PyTorchModel model;
  model.gpu = gpu;
  return model.architecture();  // an entry of the static table (gpuArchitectures)
}

}  // namespace

void bindCuda(py::module_& m) {
  m.def("memory_allocated", [] { return cudaAllocator().current().allocatedBytes; });
  m.def("max_memory_allocated", [] { return cudaAllocator().peak().allocatedBytes; });
  m.def("memory_reserved", [] { return cudaAllocator().current().reservedBytes; });
  m.def("max_memory_reserved", [] { return cudaAllocator().peak().reservedBytes; });
  m.def(
      "memory_stats", [] { return memoryStatsByKey(cudaAllocator().stats()); },
      "torch.cuda.memory_stats() of the model: every key PyTorch returns "
      "(core/memory/device_stats.h).");
  m.def("reset_accumulated_memory_stats", [] { cudaAllocator().resetAccumulated(); });
  m.def("reset_peak_memory_stats", [] { cudaAllocator().resetPeak(); });
  m.def("empty_cache", [] { cudaAllocator().emptyCache(); });
  m.def("set_cuda_mode", [](const std::string& mode) {
    if (mode != "data" && mode != "meta")
      throw std::invalid_argument("set_cuda_mode: mode must be \"data\" or \"meta\", got \"" +
                                  mode + "\"");
    Runtime::instance().setMode(mode == "meta" ? CudaMode::Meta : CudaMode::Data);
  });
  m.def("cuda_mode", [] { return Runtime::instance().mode() == CudaMode::Meta ? "meta" : "data"; });
  m.def("set_device_capacity",
        [](std::optional<int64_t> bytes) { Runtime::instance().setCapacity(bytes); });
  m.def("device_capacity", [] { return Runtime::instance().capacity(); });
  m.def("set_pytorch", [](const std::string& version) {
    PyTorchModel model = Runtime::instance().pytorchModel();
    model.version = parsePyTorchVersion(version);
    Runtime::instance().setPyTorchModel(model);
  });
  m.def("pytorch",
        [] { return std::string(pytorchVersionName(Runtime::instance().pytorchModel().version)); });
  m.def("set_gpu", [](const std::string& key) {
    PyTorchModel model = Runtime::instance().pytorchModel();
    model.gpu = key;
    Runtime::instance().setPyTorchModel(model);
  });
  m.def("gpu", [] { return Runtime::instance().pytorchModel().gpu; });
  m.def("pytorch_model", [] { return Runtime::instance().pytorchModel().describe(); });
  // The modelled GPU as torch.cuda.get_device_properties() names its fields.
  m.def("gpu_properties", [] {
    const GpuArchitecture& a = Runtime::instance().pytorchModel().architecture();
    py::dict d;
    d["name"] = std::string(a.name);
    d["major"] = a.computeCapability / 10;
    d["minor"] = a.computeCapability % 10;
    d["multi_processor_count"] = a.multiProcessorCount;
    d["regs_per_multiprocessor"] = a.regsPerMultiprocessor;
    d["max_threads_per_multi_processor"] = a.maxThreadsPerMultiProcessor;
    return d;
  });
  // The rules themselves, for code that replays PyTorch ops outside the engine.
  m.def(
      "cublas_workspace_bytes",
      [](const std::string& gpu, std::optional<std::string> config) {
        return cublasWorkspaceBytes(
            architectureOf(gpu).computeCapability,
            config ? std::optional<std::string_view>(*config) : std::nullopt);
      },
      py::arg("gpu"), py::arg("config") = py::none());
  m.def("softmax_backward_temporaries", [](int64_t numel, int64_t elementBytes) {
    return temporarySteps(softmaxBackwardTemporaries(numel, elementBytes));
  });
  m.def("topk_temporaries", [](int64_t numSlices, int64_t sliceSize, int64_t elementBytes,
                               const std::string& gpu) {
    return temporarySteps(topkTemporaries(numSlices, sliceSize, elementBytes, architectureOf(gpu)));
  });
  m.def(
      "efficient_attention_backward_temporaries",
      [](int64_t batch, int64_t heads, int64_t lq, int64_t lk, int64_t dqk, int64_t dv,
         int64_t elementBytes, bool gradOutContiguous) {
        return temporarySteps(efficientAttentionBackwardTemporaries(
            {batch, heads, lq, lk, dqk, dv}, elementBytes, gradOutContiguous));
      },
      py::arg("batch"), py::arg("heads"), py::arg("lq"), py::arg("lk"), py::arg("dqk"),
      py::arg("dv"), py::arg("element_bytes"), py::arg("grad_out_contiguous"));
  m.def("index_put_sort_temporaries",
        [](int64_t numIndices, int64_t maxKey, bool indexOnDevice, const std::string& gpu) {
          return temporarySteps(
              indexPutSortTemporaries(numIndices, maxKey, indexOnDevice, architectureOf(gpu)));
        });
  m.def("reduction_temporaries",
        [](const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
           const std::vector<bool>& reduced, int64_t accumulateBytes, int64_t offsetElements,
           const std::string& gpu) {
          if (strides.size() != sizes.size() || reduced.size() != sizes.size())
            throw std::invalid_argument(
                "reduction_temporaries: sizes, strides and reduced "
                "must have one entry per dim");
          std::vector<ReductionDim> dims;
          for (size_t d = 0; d < sizes.size(); ++d)
            dims.push_back({sizes[d], strides[d], reduced[d]});
          return temporarySteps(
              reductionTemporaries(dims, accumulateBytes, offsetElements, architectureOf(gpu)));
        });
  m.def("set_per_process_memory_fraction",
        [](double fraction) { Runtime::instance().setMemoryFraction(fraction); });
}

}  // namespace matmulviz::python
