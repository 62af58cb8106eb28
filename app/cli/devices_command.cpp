// matmulviz-cli devices: the backends and, for each, whether it can run here and why not.
#include "app/cli/commands.h"
#include "core/memory/host_backing.h"
#include "core/util/blas.h"
#include "kernels/cuda/cuda_probe.h"

#include <cstdio>
#include <iostream>

namespace matmulviz::cli {

Action addDevicesCommand(CLI::App& app) {
  app.add_subcommand("devices", "List the backends and why one is unavailable");
  return [] {
    const auto cuda = kernels::probeCuda();
    std::printf("%-6s %-11s %s\n", "device", "available", "details");
    std::printf(
        "%-6s %-11s arithmetic on this machine with OpenBLAS (%d threads); memory "
        "accounted as a CUDA device's; %.1f GiB of host memory available\n",
        "cpu", "yes", blas::numThreads(),
        static_cast<double>(availableHostMemoryBytes()) / (1 << 30));
    std::printf(
        "%-6s %-11s sizes, strides and memory accounting only, no data (PyTorch's meta "
        "device)\n",
        "meta", "yes");
    if (cuda.available) {
      for (const auto& name : cuda.deviceNames)
        std::printf("%-6s %-11s %s (runtime %d, driver %d)\n", "cuda", "yes", name.c_str(),
                    cuda.runtimeVersion, cuda.driverVersion);
    } else {
      std::printf("%-6s %-11s %s%s\n", "cuda", "no", cuda.reason.c_str(),
                  cuda.compiled ? " (the CUDA backend is compiled in)" : "");
    }
    return 0;
  };
}

}  // namespace matmulviz::cli
