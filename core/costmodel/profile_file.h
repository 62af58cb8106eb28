#pragma once
// A GPU profile as a file: what `matmulviz-cli calibrate` measures on a user's GPU, read back by
// `--model FILE` (strategies, export, launch) and by the app, so that a user's own GPU gets its
// own predictions. JSON:
//   {"format": "matmulviz-gpu-profile", "version": 1, "key": "mygpu",
//    "name": "NVIDIA H200 (calibrated)", "compute_capability": 90,
//    "bandwidth_bytes_per_s": 4.3e12, "float32_flops_per_s": 5.0e13,
//    "sgemm_flops_per_s": 5.0e13, "launch_latency_s": 2.5e-6, "on_chip_bytes_per_s": 3.3e13,
//    "host_op_s": 6e-6, "blocking_copy_s": 3e-5, "host_to_device_bytes_per_s": 1e10,
//    "source": "calibrated with matmulviz-cli calibrate, 2026-11-28", "measured": {...}}
// Rates (bytes or FLOPs per second) lie in [1e3, 1e18], times in [1e-12, 10] seconds; "measured"
// (free-form, what calibrate saw) is kept for people and not read.

#include <string>
#include <string_view>

#include "core/costmodel/cost_model.h"

namespace matmulviz::costmodel {

/// The profile in `text` (the JSON above; `where` names it in messages). Throws
/// std::invalid_argument naming the field and what is allowed: not JSON, another format, a
/// version other than 1, a missing rate or time or one outside its range, an empty key or name.
GpuProfile parseGpuProfile(std::string_view text, const std::string& where);

/// parseGpuProfile of the file at `path`; also throws std::invalid_argument when it cannot be
/// read.
GpuProfile readGpuProfile(const std::string& path);

/// The JSON of `p` as parseGpuProfile reads it, indented; `measuredJson` (a JSON object's text,
/// or empty) goes in as "measured".
std::string gpuProfileJson(const GpuProfile& p, const std::string& measuredJson = {});

/// A built-in profile's key, or the path of a profile file: the profile either names. Throws
/// std::invalid_argument "--model: ..." for neither (allowed keys listed) or a bad file.
GpuProfile resolveGpuProfile(const std::string& keyOrPath);

}  // namespace matmulviz::costmodel
