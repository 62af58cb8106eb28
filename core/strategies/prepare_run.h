#pragma once
// One preparation path for a strategies run (issue 15): every front end (the CLI's
// `strategies` and `export`, the app's run controller) calls it before anything is allocated,
// so all refuse the same things with the same words. It checks the configuration, the dtype
// rules per device and whether the inputs and references fit in this machine's RAM, then makes
// the seeded random inputs.
//
// A cuda device is made by the CUDA backend, above core: the front end sets
// RunConfig::deviceFactory (kernels/cuda/cuda_device.h useCudaDeviceIfAsked) and probes the GPU.

#include "core/strategies/runner.h"
#include "core/util/bad_input.h"

#include <cstdint>
#include <functional>

namespace matmulviz {

/// Share of MemAvailable a run may plan to use for its inputs and references.
inline constexpr double kHostMemoryShare = 0.85;

/// Host bytes a run holds before any strategy runs: a, c and q, the float64 reference out (and,
/// with backward, the float64 reference gradients and grad_output), and the engine's per-row
/// bookkeeping of the loop strategies (about 2.5 KiB a row: each row's result tensor, storage,
/// allocator record and, with grad, its autograd nodes, measured). On meta: q and the
/// bookkeeping only.
int64_t hostInputBytes(const RunConfig& config);

/// Throws BadInput (field "dtype") when the engine cannot compute `dtype` on `device`: the
/// strategies take float32, float16 and bfloat16, and the cuda device float32 only for now.
void checkDTypeOnDevice(DType dtype, DeviceKind device);

/// Checks `config` without allocating anything. Throws BadInput naming the field:
/// "n", "m", "i", "j", "k", "batch" (below 1), "sizes" (a product too large to index),
/// "repeats" (below 1), "strategies" (none, or an unknown name), "dtype" (checkDTypeOnDevice),
/// "device memory" (not positive), and "host memory" when config.checkHostMemory and
/// hostInputBytes(config) exceeds kHostMemoryShare of availableHostMemoryBytes() (the message
/// says what does not fit, how much it needs and the limit used).
void preflight(const RunConfig& config);

struct PreparedRun {
  RunConfig config;
  Inputs inputs;  ///< makeRandomInputs(workload, seed); a and c undefined on the meta device
};

/// preflight(config), then the seeded random inputs (host memory: hostInputBytes without the
/// references). Throws BadInput as preflight; std::bad_alloc only when the machine's available
/// memory shrank between the check and the allocation.
PreparedRun prepareRun(RunConfig config);

/// preflight(config), then the inputs `inputs` makes for the checked config (a front end that
/// reads some of them from files: the CLI's --a, --c, --q), then checkInputs. Throws BadInput as
/// preflight or checkInputs, and whatever `inputs` throws.
PreparedRun prepareRun(RunConfig config, const std::function<Inputs(const RunConfig&)>& inputs);

}  // namespace matmulviz
