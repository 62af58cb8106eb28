// matmulviz-cli launch: runs one kernel variant on the simulated launcher (one CUDA thread at a
// time, with diagnostics and an optional trace) or, with --device cuda, on a GPU beside cuBLAS.
// The faulty teaching kernels (kernels/05_* to 07_*) run on the simulator only.
// Exit codes: 0 success (diagnostics are part of the report, not a failure), 1 the run failed
// (e.g. no CUDA device) or its accuracy check did (C holds NaN or Inf), 2 bad input (a faulty
// kernel with --device cuda among them).
#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/cli/commands.h"
#include "app/cli/output_files.h"
#include "app/cli/tpb_option.h"
#include "core/costmodel/cost_model.h"
#include "core/costmodel/kernel_cost.h"
#include "core/costmodel/profile_file.h"
#include "core/memory/caching_allocator.h"
#include "core/memory/host_backing.h"
#include "core/sim/trace_io.h"
#include "core/util/format_units.h"
#include "core/util/parse_size.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/cuda_probe.h"
#include "kernels/launch_report.h"
#include "kernels/registry.h"

namespace matmulviz::cli {
namespace {

struct LaunchOptions {
  std::string kernel = "naive";
  std::string m = "5", k = "784", n = "10";  // the lesson's m1 [5, 784] @ m2 [784, 10]
  std::string tpb = "16";
  std::string batch = "8", table = "4";
  std::string seed = "0";
  std::string device = "cpu";
  std::string repeats = "10";
  std::string json, trace, traceCap = "256MiB", traceBlocks, maxDiagnostics = "32", model;
  std::string simThreads = "0";
};

/// One block id of --trace-blocks; throws std::invalid_argument saying what is wrong with `text`.
std::int64_t parseBlockId(const std::string& text, const std::string& item) {
  try {
    return parsePositiveInt(text, "--trace-blocks", 0);
  } catch (const std::invalid_argument&) {
    throw std::invalid_argument("--trace-blocks: '" + item +
                                "' is not a block id or a range LO-HI of them (give linear block "
                                "ids from 0, x fastest, e.g. 0,5,7-9)");
  }
}

/// "0,5,7-9" -> {0, 5, 7, 8, 9}: linear block ids (x fastest). At most 1,000,000 ids.
std::vector<std::uint64_t> parseBlockList(const std::string& text) {
  std::vector<std::uint64_t> ids;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const std::size_t dash = item.find('-');
    const std::int64_t lo = parseBlockId(item.substr(0, dash), item);
    const std::int64_t hi =
        dash == std::string::npos ? lo : parseBlockId(item.substr(dash + 1), item);
    if (hi < lo) {
      throw std::invalid_argument("--trace-blocks: the range '" + item +
                                  "' ends before it starts; write LO-HI with LO <= HI, e.g. " +
                                  std::to_string(hi) + "-" + std::to_string(lo));
    }
    if (ids.size() + static_cast<std::uint64_t>(hi - lo) >= 1000000) {
      throw std::invalid_argument("--trace-blocks: at most 1000000 blocks can be selected");
    }
    for (std::int64_t b = lo; b <= hi; ++b) ids.push_back(static_cast<std::uint64_t>(b));
  }
  if (ids.empty()) throw std::invalid_argument("--trace-blocks: give block ids such as 0,5,7-9");
  return ids;
}

/// Bytes the inputs, the output and the float64 reference of `p` take on the host.
std::int64_t hostBytes(const kernels::MatmulProblem& p, bool gathered) {
  const std::int64_t a = (gathered ? p.batch : 1) * p.M * p.K;
  const std::int64_t b = (gathered ? p.table : 1) * p.K * p.N;
  const std::int64_t out = kernels::outputElements(p, gathered);
  return (a + b + out) * 4 + (a + b + out) * 8 + (gathered ? p.batch * 8 : 0);
}

/// The model's prediction of cuBLAS's run beside `variant` (gemm, or gemmBatchedEx over
/// gathered pointers).
costmodel::Prediction predictCublas(const kernels::KernelVariant& variant,
                                    const kernels::MatmulProblem& p, int tpb,
                                    const costmodel::GpuProfile& gpu) {
  costmodel::KernelShape shape = kernels::kernelShape(variant, p, tpb);
  shape.kernel = variant.gathered ? "cublas_gather_pointers" : "cublas_gemm";
  return costmodel::predictKernel(shape, gpu);
}

/// "predicted 140 ms (model: NVIDIA H200 SXM, on-chip-bound), measured 142 ms: 0.99x".
std::string besideMeasured(const costmodel::Prediction& p, double measuredS,
                           const costmodel::GpuProfile& gpu) {
  return "predicted " + formatSeconds(p.totalS) + " (" + gpu.name + ", " + std::string(p.bound) +
         "-bound), measured " + formatSeconds(measuredS) + ": predicted/measured " +
         formatFactor(p.totalS / measuredS);
}

int runOnCuda(const kernels::KernelVariant& variant, const kernels::MatmulProblem& p, int tpb,
              std::uint64_t seed, int repeats, const std::string& jsonPath,
              const costmodel::GpuProfile* gpu) {
  const kernels::CudaStatus status = kernels::probeCuda();
  if (!status.available) {
    std::cerr << "matmulviz-cli launch: --device cuda: CUDA is not available: " << status.reason
              << ". Use --device cpu for the simulated launcher.\n";
    return 1;
  }
  const sim::LaunchConfig config = variant.config(p, tpb);
  const kernels::MatmulInputs in = kernels::makeInputs(p, variant.gathered, seed);
  const std::vector<double> ref = kernels::referenceMatmul(p, variant.gathered, in);
  const kernels::cuda::CudaRun run = kernels::cuda::runKernel(variant.name, p, tpb, in, repeats);
  const kernels::cuda::CublasMode mode = variant.gathered
                                             ? kernels::cuda::CublasMode::GatherPointers
                                             : kernels::cuda::CublasMode::Gemm;
  const kernels::cuda::CudaRun blas = kernels::cuda::runCublas(p, mode, in, repeats);
  const double err = kernels::maxRelErr(run.out.data(), ref);
  const double blasErr = kernels::maxRelErr(blas.out.data(), ref);
  const auto dim3 = [](const sim::Dim3& d) {
    return nlohmann::ordered_json::array({d.x, d.y, d.z});
  };
  nlohmann::ordered_json sizes = {{"m", p.M}, {"k", p.K}, {"n", p.N}};
  if (variant.gathered) {
    sizes["batch"] = p.batch;
    sizes["table"] = p.table;
  }
  nlohmann::ordered_json j = {
      {"kernel", std::string(variant.name)},
      {"device", "cuda"},
      {"device_name", run.device},
      {"sizes", sizes},
      {"tpb", tpb},
      {"grid", dim3(config.gridDim)},
      {"block", dim3(config.blockDim)},
      {"shared_bytes", config.sharedBytes},
      {"threads", config.threads()},
      {"max_rel_err",
       std::isfinite(err) ? nlohmann::ordered_json(err) : nlohmann::ordered_json(nullptr)},
      {"accuracy_failed", !std::isfinite(err)},
      {"time_s", run.medianMs / 1e3},
      {"time_min_s", run.minMs / 1e3},
      {"repeats", repeats},
      {"cublas",
       {{"mode", kernels::cuda::toString(mode)},
        {"time_s", blas.medianMs / 1e3},
        {"max_rel_err", std::isfinite(blasErr) ? nlohmann::ordered_json(blasErr)
                                               : nlohmann::ordered_json(nullptr)}}},
      {"diagnostics", nlohmann::ordered_json::array()}};
  if (gpu != nullptr) {
    j["model"] = kernels::launchModelJson(variant, p, tpb, *gpu, nullptr);
    j["cublas"]["predicted_s"] = predictCublas(variant, p, tpb, *gpu).totalS;
  }
  const int exitCode = std::isfinite(err) ? 0 : 1;  // NaN or Inf in C: the check fails
  if (exitCode != 0)
    std::cerr << "matmulviz-cli launch: warning: C holds NaN or Inf, so max_rel_err is not "
                 "finite and the accuracy check fails\n";
  if (jsonPath == "-") {
    std::cout << j.dump(2) << "\n";
    return exitCode;
  }
  std::cout << "kernel " << variant.name << " on " << run.device << ": "
            << formatSeconds(run.medianMs / 1e3) << " (median of " << repeats
            << ", CUDA events), cuBLAS " << kernels::cuda::toString(mode) << " "
            << formatSeconds(blas.medianMs / 1e3) << "; max_rel_err " << err << "\n";
  if (gpu != nullptr) {
    if (costmodel::hasKernelModel(variant.name))
      std::cout << "  " << variant.name << ": "
                << besideMeasured(
                       costmodel::predictKernel(kernels::kernelShape(variant, p, tpb), *gpu),
                       run.medianMs / 1e3, *gpu)
                << "\n";
    std::cout << "  cuBLAS: "
              << besideMeasured(predictCublas(variant, p, tpb, *gpu), blas.medianMs / 1e3, *gpu)
              << "\n  (the model is a model, not a measurement; " << gpu->source << ")\n";
  }
  if (!jsonPath.empty()) {
    writeFileAtomically(jsonPath, [&](std::ostream& os) { os << j.dump(2) << "\n"; });
    std::cerr << "[matmulviz] wrote " << jsonPath << "\n";
  }
  return exitCode;
}

/// What `launch` runs, from its options once they are checked.
struct LaunchPlan {
  const kernels::KernelVariant* variant = nullptr;
  kernels::MatmulProblem problem;
  int tpb = 0;
  std::uint64_t seed = 0;
  int repeats = 1;
  sim::LaunchOptions sim;
  std::optional<costmodel::GpuProfile> gpu;
};

/// The kernel, its GPU profile and the device, checked. Throws std::invalid_argument.
void checkKernelAndDevice(const LaunchOptions& o, LaunchPlan& plan) {
  if (!o.model.empty()) plan.gpu = costmodel::resolveGpuProfile(o.model);
  plan.variant = kernels::findKernel(o.kernel);
  if (plan.variant == nullptr || plan.variant->reference) {
    throw std::invalid_argument("--kernel: '" + o.kernel +
                                "' is not a kernel; allowed: " + kernels::kernelNames() +
                                ", or a teaching kernel that is wrong "
                                "on purpose: " +
                                kernels::faultyKernelNames());
  }
  if (o.device != "cpu" && o.device != "cuda") {
    throw std::invalid_argument("--device: '" + o.device +
                                "' is not a device; allowed: cpu | cuda");
  }
  if (plan.variant->faulty && o.device == "cuda") {
    throw std::invalid_argument(
        "--kernel " + o.kernel + " --device cuda: " + o.kernel + " is wrong on purpose (" +
        std::string(plan.variant->file) +
        ") and runs on the simulator only, which reports its faults instead of committing "
        "them; on a GPU it would really race or access memory out of bounds. Use --device "
        "cpu");
  }
}

/// The sizes, tpb, seed and repeats, and the kernel's launch configuration for them.
void parseProblem(const LaunchOptions& o, LaunchPlan& plan) {
  constexpr std::int64_t kIntMax = 2147483647;
  kernels::MatmulProblem& problem = plan.problem;
  problem.M = parsePositiveInt(o.m, "--m", 1, kIntMax);
  problem.K = parsePositiveInt(o.k, "--k", 1, kIntMax);
  problem.N = parsePositiveInt(o.n, "--n", 1, kIntMax);
  if (plan.variant->gathered) {
    problem.batch = parsePositiveInt(o.batch, "--batch", 1, kIntMax);
    problem.table = parsePositiveInt(o.table, "--table", 1, kIntMax);
  }
  plan.tpb = parseTpb(o.tpb);
  plan.seed = static_cast<std::uint64_t>(parsePositiveInt(o.seed, "--seed", 0));
  plan.repeats = static_cast<int>(parsePositiveInt(o.repeats, "--repeats", 1, 100000));
  try {
    plan.variant->config(problem, plan.tpb);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(
        "--m " + o.m + " --k " + o.k + " --n " + o.n + " --tpb " + o.tpb +
        (plan.variant->gathered ? " --batch " + o.batch + " --table " + o.table : "") + ": " +
        e.what());
  }
}

/// The simulator's options (diagnostics, trace, traced blocks) and the output paths.
void parseSimulatorOptions(const LaunchOptions& o, LaunchPlan& plan) {
  sim::LaunchOptions& sim = plan.sim;
  sim.kernel = o.kernel;
  sim.maxDiagnostics =
      static_cast<std::size_t>(parsePositiveInt(o.maxDiagnostics, "--max-diagnostics", 0, 100000));
  sim.threads = static_cast<unsigned>(parsePositiveInt(o.simThreads, "--sim-threads", 0, 1024));
  sim.trace = !o.trace.empty();
  sim.traceCapBytes = static_cast<std::size_t>(parseByteSize(o.traceCap, "--trace-cap"));
  if (!o.traceBlocks.empty()) {
    if (!sim.trace) throw std::invalid_argument("--trace-blocks: give --trace PATH as well");
    sim.traceBlocks = parseBlockList(o.traceBlocks);
    const std::uint64_t blocks = plan.variant->config(plan.problem, plan.tpb).blocks();
    for (const std::uint64_t b : sim.traceBlocks) {
      if (b >= blocks) {
        throw std::invalid_argument("--trace-blocks: block " + std::to_string(b) +
                                    " is outside the grid of " + std::to_string(blocks) +
                                    " blocks (linear ids 0.." + std::to_string(blocks - 1) +
                                    ", x fastest)");
      }
    }
  }
  if (sim.trace && o.device == "cuda") {
    throw std::invalid_argument("--trace: traces come from the simulator; use --device cpu");
  }
  checkOutputPath(o.json, "--json");
  checkOutputPath(o.trace, "--trace");
  if (o.trace == "-") throw std::invalid_argument("--trace: give a file path, not '-'");
}

/// Refuses sizes whose inputs, output, float64 reference and trace would not fit in 85% of the
/// host memory available now.
void checkHostMemory(const LaunchPlan& plan) {
  const std::int64_t need = hostBytes(plan.problem, plan.variant->gathered);
  const std::int64_t available = availableHostMemoryBytes();
  if (static_cast<double>(need) + static_cast<double>(plan.sim.trace ? plan.sim.traceCapBytes : 0) >
      0.85 * static_cast<double>(available)) {
    throw std::invalid_argument(
        "sizes too large for this machine: inputs, output and float64 "
        "reference need " +
        formatSize(need) + (plan.sim.trace ? " plus the trace cap" : "") + " but only " +
        formatSize(available) + " are available");
  }
}

/// Runs the plan on the simulator and prints or writes its report, trace and warnings.
int runOnSimulator(const LaunchPlan& plan, const LaunchOptions& o) {
  const kernels::KernelVariant& variant = *plan.variant;
  const kernels::SimulatedRun run =
      kernels::runSimulated(variant, plan.problem, plan.tpb, plan.seed, plan.sim);
  const nlohmann::ordered_json j =
      kernels::launchJson(variant, plan.problem, plan.tpb, run, plan.gpu ? &*plan.gpu : nullptr);
  if (o.json == "-") {
    std::cout << j.dump(2) << "\n";
  } else {
    kernels::writeLaunchText(std::cout, variant, plan.problem, plan.tpb, run);
    if (plan.gpu) {
      const nlohmann::ordered_json m = j["model"];
      std::cout << "  model (" << plan.gpu->name
                << ", not a measurement): " << formatSeconds(m["predicted_s"].get<double>())
                << " predicted, " << m["bound"].get<std::string>()
                << "-bound: " << m["explanation"].get<std::string>() << "\n";
    }
    if (!o.json.empty()) {
      writeFileAtomically(o.json, [&](std::ostream& os) { os << j.dump(2) << "\n"; });
      std::cerr << "[matmulviz] wrote " << o.json << "\n";
    }
  }
  if (plan.sim.trace) {
    writeFileAtomically(o.trace, [&](std::ostream& os) { sim::writeTraceJson(os, run.report); });
    std::cerr << "[matmulviz] wrote " << o.trace << " (" << run.report.trace.events().size()
              << " events, " << run.report.trace.dropped() << " dropped by the "
              << formatSize(static_cast<std::int64_t>(run.report.trace.capBytes())) << " cap)\n";
  }
  if (!std::isfinite(run.maxRelErr)) {
    std::cerr << "matmulviz-cli launch: warning: C holds NaN or Inf, so max_rel_err is not "
                 "finite and the accuracy check fails\n";
    return 1;
  }
  return 0;
}

int runLaunch(const LaunchOptions& o) {
  LaunchPlan plan;
  try {
    checkKernelAndDevice(o, plan);
    parseProblem(o, plan);
    parseSimulatorOptions(o, plan);
    checkHostMemory(plan);
  } catch (const std::invalid_argument& e) {
    std::cerr << "matmulviz-cli launch: " << e.what() << "\n";
    return 2;
  }
  if (o.device == "cuda")
    return runOnCuda(*plan.variant, plan.problem, plan.tpb, plan.seed, plan.repeats, o.json,
                     plan.gpu ? &*plan.gpu : nullptr);
  return runOnSimulator(plan, o);
}

}  // namespace

Action addLaunchCommand(CLI::App& app) {
  auto o = std::make_shared<LaunchOptions>();
  CLI::App* cmd = app.add_subcommand(
      "launch",
      "Run a CUDA-style matmul kernel on the simulated launcher, one thread at a time (or on a "
      "GPU with --device cuda)");
  cmd->add_option("--kernel", o->kernel,
                  "naive | coalesced | smem_tiled | gather_bmm | grouped_bmm (default naive), or a "
                  "teaching "
                  "kernel that is wrong on purpose and runs on the simulator only, to show its "
                  "diagnostics: smem_tiled_no_sync (a shared-memory race) | naive_no_bounds_check "
                  "(out-of-bounds accesses) | smem_tiled_divergent_barrier (barrier divergence)");
  cmd->add_option("--m", o->m, "M: rows of A and C (default 5)");
  cmd->add_option("--k", o->k, "K: columns of A, rows of B (default 784)");
  cmd->add_option("--n", o->n, "N: columns of B and C (default 10)");
  cmd->add_option("--tpb", o->tpb,
                  "threads per block side, 1..32: blocks of TPB x TPB (default 16)");
  cmd->add_option("--batch", o->batch,
                  "gather_bmm, grouped_bmm: items, out[b] = a[b] @ c[q[b]] with a [batch, M, K] "
                  "(default 8)");
  cmd->add_option("--table", o->table,
                  "gather_bmm, grouped_bmm: matrices in c [table, K, N] (default 4)");
  cmd->add_option("--seed", o->seed, "seed of the random inputs (default 0)");
  cmd->add_option("--device", o->device, "cpu (the simulated launcher) | cuda (a real GPU)");
  cmd->add_option("--repeats", o->repeats, "--device cuda: timed launches (default 10)");
  cmd->add_option("--json", o->json,
                  "write the report as JSON to PATH, or - for stdout; max_rel_err is null when "
                  "not finite (C holds NaN or Inf: \"accuracy_failed\": true, exit code 1)");
  cmd->add_option("--trace", o->trace, "write what each thread read and wrote to PATH (JSON)");
  cmd->add_option("--trace-cap", o->traceCap,
                  "most memory the trace may take, e.g. 64MiB (default 256MiB); beyond it events "
                  "are counted as dropped");
  cmd->add_option("--trace-blocks", o->traceBlocks,
                  "trace only these linear block ids (x fastest), e.g. 0,5,7-9 (default all)");
  cmd->add_option("--model", o->model,
                  "add the cost model's predicted time on a GPU profile: h200 | h100 | a100 | t4, "
                  "or a profile file written by `matmulviz-cli calibrate`; with --device cuda "
                  "it is printed beside the measured time, the kernel's and cuBLAS's");
  cmd->add_option("--max-diagnostics", o->maxDiagnostics,
                  "diagnostics listed in full (default 32; the counts are always exact)");
  cmd->add_option("--sim-threads", o->simThreads,
                  "host threads simulating blocks side by side (default 0: one per core; 1: one "
                  "thread); the report is the same for any number");
  return [o] { return runLaunch(*o); };
}

}  // namespace matmulviz::cli
