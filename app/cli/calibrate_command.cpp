// matmulviz-cli calibrate: measures this machine's GPU for the cost model and writes a profile
// file that `--model FILE` (strategies, export, launch) and the app (`matmulviz --model FILE`)
// accept, so that predictions are of the user's own GPU (kernels/cuda/calibrate.h).
// Exit codes: 0 written, 1 no GPU answers (or a measurement failed: a run failed), 2 bad input.
#include <iostream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "app/cli/output_files.h"
#include "core/costmodel/profile_file.h"
#include "core/util/format_units.h"
#include "kernels/cuda/calibrate.h"
#include "kernels/cuda/cuda_error.h"
#include "kernels/cuda/cuda_probe.h"

namespace matmulviz::cli {
namespace {

struct CalibrateOptions {
  std::string out = "gpu-profile.json";
  std::string key = "calibrated";
};

/// What was measured and how, for people (the profile file's "measured" object).
std::string measuredJson(const kernels::cuda::Calibration& c) {
  const costmodel::GpuProfile& p = c.profile;
  const auto item = [](double value, const char* method) {
    return nlohmann::ordered_json{{"value", value}, {"method", method}};
  };
  const nlohmann::ordered_json j = {
      {"device", c.device},
      {"sms", c.sms},
      {"clock_khz", c.clockKHz},
      {"launch_latency_s",
       item(p.launchLatencyS, "host wall time per launch, 2000 empty kernels, median of 5")},
      {"copy_bandwidth_bytes_per_s",
       item(p.bandwidthBytesPerS,
            "512 MiB cudaMemcpy device to device, bytes read + written, best of 10")},
      {"sgemm_flops_per_s", item(p.sgemmFlopsPerS, "cuBLAS sgemm 4096^3, float32, median of 10")},
      {"host_to_device_bytes_per_s",
       item(p.hostToDeviceBytesPerS, "64 MiB from pageable memory, median of 5")},
      {"small_blocking_copy_s", item(c.smallCopyS, "2 KiB from pageable memory, median of 200")},
      {"on_chip_bytes_per_s", item(p.onChipBytesPerS, "SMs x 128 bytes x clock (attributes)")},
      {"not_measured",
       "host_op_s (PyTorch's host time per op) and blocking_copy_s beyond a bare copy keep the "
       "values measured with an H200; float32_flops_per_s is the sgemm rate"}};
  return j.dump();
}

int runCalibrate(const CalibrateOptions& o) {
  try {
    checkOutputPath(o.out, "--out");
    if (o.key.empty() || o.key.size() > 64)
      throw std::invalid_argument("--key: give a short name, e.g. mygpu");
  } catch (const std::invalid_argument& e) {
    std::cerr << "matmulviz-cli calibrate: " << e.what() << "\n";
    return 2;
  }
  const kernels::CudaStatus status = kernels::probeCuda();
  if (!status.available) {
    std::cerr << "matmulviz-cli calibrate: no GPU to measure: CUDA is not available: "
              << status.reason
              << ". Run it on the machine whose GPU you want predictions for; elsewhere pass a "
                 "built-in profile to --model ("
              << costmodel::gpuProfileKeys() << ").\n";
    return 1;
  }
  kernels::cuda::Calibration c;
  try {
    std::cerr << "[matmulviz] measuring " << status.deviceNames.at(0) << " (a few seconds)\n";
    c = kernels::cuda::calibrateGpu(0);
  } catch (const kernels::cuda::CudaError& e) {
    std::cerr << "matmulviz-cli calibrate: " << e.what() << "\n";
    return 1;
  }
  c.profile.key = o.key;
  const std::string text = costmodel::gpuProfileJson(c.profile, measuredJson(c));
  costmodel::parseGpuProfile(text, "calibrate");  // what --model will read back
  const costmodel::GpuProfile& p = c.profile;
  std::cout << p.name << " (compute capability " << p.computeCapability / 10 << "."
            << p.computeCapability % 10 << ")\n"
            << "  launch latency     " << formatSeconds(p.launchLatencyS) << "\n"
            << "  copy bandwidth     " << formatRate(p.bandwidthBytesPerS, "B") << "\n"
            << "  sgemm 4096^3       " << formatRate(p.sgemmFlopsPerS, "FLOP") << "\n"
            << "  host to device     " << formatRate(p.hostToDeviceBytesPerS, "B")
            << " (pageable), a 2 KiB copy " << formatSeconds(c.smallCopyS) << "\n"
            << "  on chip            " << formatRate(p.onChipBytesPerS, "B") << " (" << c.sms
            << " SMs x 128 B x " << c.clockKHz / 1000 << " MHz)\n";
  if (o.out == "-") {
    std::cout << text;
    return 0;
  }
  writeFileAtomically(o.out, [&](std::ostream& os) { os << text; });
  std::cerr << "[matmulviz] wrote " << o.out << " (use it as --model " << o.out << ")\n";
  return 0;
}

}  // namespace

Action addCalibrateCommand(CLI::App& app) {
  auto o = std::make_shared<CalibrateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate",
      "Measure this machine's GPU (launch latency, copy bandwidth, the sgemm rate, host-to-device "
      "copies) and write a GPU profile for --model, so predictions are of your own GPU. Without "
      "a GPU it exits with status 1");
  cmd->add_option("--out", o->out,
                  "the profile file to write, or - for stdout (default "
                  "gpu-profile.json)");
  cmd->add_option("--key", o->key, "the profile's short name (default calibrated)");
  return [o] { return runCalibrate(*o); };
}

}  // namespace matmulviz::cli
