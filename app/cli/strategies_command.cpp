// matmulviz-cli strategies: the seed's gathered batched matmul with each strategy; prints or
// writes the report (README, "More of the command line").
#include "app/cli/bad_input_text.h"
#include "app/cli/commands.h"
#include "app/cli/cuda_option.h"
#include "app/cli/output_files.h"
#include "app/cli/run_for_cli.h"
#include "core/costmodel/cost_model.h"
#include "core/costmodel/report_predictions.h"
#include "core/io/npy.h"
#include "core/ops/ops.h"
#include "core/report/chrome_trace.h"
#include "core/report/report_json.h"
#include "core/report/report_text.h"
#include "core/strategies/prepare_run.h"
#include "core/strategies/preset.h"
#include "core/util/format_units.h"
#include "core/util/parse_size.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <utility>
#include <vector>

namespace matmulviz::cli {

namespace {

struct Options {
  std::string n, m, i, j, k, batch, repeats, seed, dtype = "float32", requiresGrad = "none";
  std::string strategies, device = "cpu", deviceMemory, preset, json, timeline, saveDir;
  std::string aPath, cPath, qPath, gradOutputPath, model;
  bool backward = false, force = false;
};

/// Runs `parse`, prefixing the message of its std::invalid_argument with `arg` ("--dtype: ").
template <typename F>
auto forArgument(const char* arg, F&& parse) {
  try {
    return parse();
  } catch (const BadInput&) {  // names its field: worded by cliMessage
    throw;
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    if (msg.rfind("--", 0) == 0) throw;
    throw std::invalid_argument(std::string(arg) + ": " + msg);
  }
}

/// Sizes up to 2^40: far beyond any machine, and a bound a person can read.
constexpr int64_t kMaxSize = int64_t{1} << 40;

/// Applies the preset, then every option the user gave explicitly. Throws invalid_argument.
RunConfig buildConfig(const Options& o, const CLI::App& cmd) {
  RunConfig c = o.preset.empty() ? RunConfig{} : loadPreset(o.preset).config;
  auto given = [&](const char* name) { return cmd.get_option(name)->count() > 0; };
  Workload& w = c.workload;
  if (given("--n")) w.n = parsePositiveInt(o.n, "--n", 1, kMaxSize);
  if (given("--m")) w.m = parsePositiveInt(o.m, "--m", 1, kMaxSize);
  if (given("--i")) w.i = parsePositiveInt(o.i, "--i", 1, kMaxSize);
  if (given("--j")) w.j = parsePositiveInt(o.j, "--j", 1, kMaxSize);
  if (given("--k")) w.k = parsePositiveInt(o.k, "--k", 1, kMaxSize);
  if (given("--batch")) w.batch = parsePositiveInt(o.batch, "--batch", 1, kMaxSize);
  if (given("--dtype")) {
    w.dtype = forArgument("--dtype", [&] { return parseDType(o.dtype); });
    if (w.dtype == DType::Float64 || !isFloating(w.dtype))
      throw std::invalid_argument("--dtype: '" + o.dtype +
                                  "' is not allowed (allowed: float32, float16, bfloat16)");
  }
  forArgument("--n/--m/--i/--j/--k", [&] {
    w.validate();
    return 0;
  });
  if (given("--requires-grad")) parseRequiresGrad(o.requiresGrad, c.requiresGradA, c.requiresGradC);
  if (given("--strategies")) {
    c.strategies.clear();
    std::stringstream ss(o.strategies);
    for (std::string s; std::getline(ss, s, ',');) {
      forArgument("--strategies", [&] { return findStrategy(s).name; });
      c.strategies.push_back(s);
    }
    if (c.strategies.empty()) throw std::invalid_argument("--strategies: give at least one");
  }
  if (given("--repeats"))
    c.repeats = static_cast<int>(parsePositiveInt(o.repeats, "--repeats", 1, 1000));
  if (given("--seed")) c.seed = static_cast<uint64_t>(parsePositiveInt(o.seed, "--seed", 0));
  if (given("--device"))
    c.device = forArgument("--device", [&] { return parseDeviceKind(o.device); });
  if (given("--device-memory")) {
    c.deviceMemoryBytes = parseByteSize(o.deviceMemory, "--device-memory");
    if (*c.deviceMemoryBytes <= 0)
      throw std::invalid_argument("--device-memory: must be more than 0 bytes, e.g. 1GiB");
  }
  if (given("--backward")) c.backward = o.backward;
  c.force = o.force;
  c.recordTimeline = !o.timeline.empty();
  c.keepOutputs = !o.saveDir.empty();
  return c;
}

Tensor readInput(const std::string& path, const char* arg, const std::vector<DType>& allowed,
                 const Shape& shape, DType want) {
  Tensor t = npy::readChecked(path, arg, allowed, shape);
  return t.dtype() == want ? t : toDType(t, want);
}

Inputs loadInputs(const Options& o, const RunConfig& c) {
  const Workload& w = c.workload;
  const bool withData = c.device != DeviceKind::Meta;
  Inputs in = makeRandomInputs(w, c.seed, withData);
  const std::vector<DType> floats{DType::Float32, DType::Float16, DType::Float64};
  if (!o.aPath.empty()) in.a = readInput(o.aPath, "--a", floats, {w.n, w.i, w.j}, w.dtype);
  if (!o.cPath.empty()) in.c = readInput(o.cPath, "--c", floats, {w.m, w.j, w.k}, w.dtype);
  if (!o.qPath.empty()) in.q = npy::readChecked(o.qPath, "--q", {DType::Int64}, {w.n});
  checkInputs(w, in);
  return in;
}

/// The prediction as the text report's last section, labelled as a model.
void writePredictions(std::ostream& os, const StrategiesReport& report,
                      const costmodel::GpuProfile& gpu) {
  os << "\npredicted forward time on " << gpu.name
     << " (a roofline model, not a measurement: max(bytes / bandwidth, flops / peak) + launches "
        "x latency):\n";
  for (const StrategyRun& r : report.runs) {
    const auto predicted = costmodel::predictRun(report.workload, r.strategy, gpu);
    if (!predicted) continue;
    const costmodel::WorkCounts& counts = predicted->counts;
    const costmodel::Prediction& p = predicted->prediction;
    char line[256];
    const std::string bound = std::string(p.bound) + "-bound";
    std::snprintf(line, sizeof line, "  %-10s %10s  %-13s %8llu launches %10s moved\n",
                  r.strategy.c_str(), formatSeconds(p.totalS).c_str(), bound.c_str(),
                  static_cast<unsigned long long>(counts.launches),
                  formatSize(static_cast<int64_t>(counts.bytesRead + counts.bytesWritten)).c_str());
    os << line;
  }
}

void saveOutputs(const std::string& dir, const StrategiesReport& report) {
  for (const StrategyRun& r : report.runs) {
    const std::filesystem::path d = std::filesystem::path(dir) / r.strategy;
    std::error_code ec;
    std::filesystem::create_directories(d, ec);
    if (ec) throw std::runtime_error("cannot create '" + d.string() + "': " + ec.message());
    if (r.out.defined()) npy::write((d / "out.npy").string(), r.out);
    if (r.backward.dA.defined()) npy::write((d / "dA.npy").string(), r.backward.dA);
    if (r.backward.dC.defined()) npy::write((d / "dC.npy").string(), r.backward.dC);
    if (report.gradOutput.defined() && r.backward.status == BackwardOutcome::Status::Ran)
      npy::write((d / "grad_output.npy").string(), report.gradOutput);
  }
}

/// Prints or writes what the options ask for: the JSON report (stdout for `--json -`) or the
/// text report with predictions, the timeline, the saved tensors, the "wrote" lines and the
/// accuracy warnings. Returns the exit status: 1 when a run failed, its accuracy check failed or
/// --save-dir could not be written, else 0.
int emitReport(const Options& o, const StrategiesReport& report) {
  const costmodel::GpuProfile* gpu = o.model.empty() ? nullptr : costmodel::findGpuProfile(o.model);
  // With --timeline the report holds the timeline too (for the app and `export --report`),
  // written compact: indented, its event rows would take three times the space.
  const bool timelines = !o.timeline.empty();
  auto json = toJson(report, timelines ? TimelineInJson::Include : TimelineInJson::Omit);
  if (gpu) costmodel::addPredictions(json, report, *gpu);
  const int indent = timelines ? -1 : 2;
  if (o.json == "-") {
    std::cout << json.dump(indent) << "\n";
  } else {
    writeTextReport(std::cout, report);
    if (gpu) writePredictions(std::cout, report, *gpu);
    if (!o.json.empty())
      writeFileAtomically(o.json, [&](std::ostream& os) { os << json.dump(indent) << "\n"; });
  }
  if (!o.timeline.empty())
    writeFileAtomically(o.timeline, [&](std::ostream& os) { writeChromeTrace(os, report); });
  if (!o.saveDir.empty()) {
    try {
      saveOutputs(o.saveDir, report);
    } catch (const std::exception& e) {  // filesystem_error, npy::NpyError
      std::cerr << "matmulviz-cli strategies: --save-dir: " << e.what() << "\n";
      return 1;
    }
  }
  for (const auto* path : {&o.json, &o.timeline})
    if (!path->empty() && *path != "-") std::cerr << "[matmulviz] wrote " << *path << "\n";
  if (o.json == "-")  // else the text report on stdout says it
    for (const StrategyRun& r : report.runs)
      for (const std::string& w : r.accuracyWarnings)
        std::cerr << "matmulviz-cli strategies: warning: " << r.strategy << ": " << w << "\n";
  return report.anyFailed() || report.anyAccuracyFailed() ? 1 : 0;
}

int run(const Options& o, const CLI::App& cmd) {
  RunConfig config;
  Inputs inputs;
  Tensor gradOutput;
  try {
    config = buildConfig(o, cmd);
    if (const auto noGpu = prepareCudaDevice(config)) {
      std::cerr << "matmulviz-cli strategies: " << *noGpu << "\n";
      return 1;
    }
    checkOutputPath(o.json, "--json");
    if (o.timeline == "-")
      throw std::invalid_argument(
          "--timeline: '-' is not allowed: give a file path (the trace is "
          "large, and --json - already uses stdout)");
    checkOutputPath(o.timeline, "--timeline");
    if (!o.model.empty() && !costmodel::findGpuProfile(o.model))
      throw std::invalid_argument("--model: unknown GPU profile '" + o.model +
                                  "' (allowed: " + costmodel::gpuProfileKeys() + ")");
    preflight(config);  // before any allocation
    inputs = loadInputs(o, config);
    if (!o.gradOutputPath.empty())
      gradOutput = readInput(
          o.gradOutputPath, "--grad-output", {DType::Float32, DType::Float16, DType::Float64},
          {config.workload.n, config.workload.i, config.workload.k}, config.workload.dtype);
    // Last: it creates the directory, which a refused run must not leave behind.
    if (cmd.get_option("--save-dir")->count() > 0) checkOutputDirectory(o.saveDir, "--save-dir");
  } catch (const BadInput& e) {
    std::cerr << "matmulviz-cli strategies: " << cliMessage(e) << "\n";
    return 2;
  } catch (const std::invalid_argument& e) {
    std::cerr << "matmulviz-cli strategies: " << e.what() << "\n";
    return 2;
  } catch (const npy::NpyError& e) {
    std::cerr << "matmulviz-cli strategies: " << e.what() << "\n";
    return 2;
  }

  int status = 0;
  const std::optional<StrategiesReport> ran = runForCli(
      "strategies",
      [&](const ProgressFn& progress) {
        StrategyRunner runner(config, std::move(inputs), std::move(gradOutput));
        runner.checkFitsInHostMemory(progress);
        return runner.run(progress);
      },
      &status);
  if (!ran) return status;
  return emitReport(o, *ran);
}

}  // namespace

Action addStrategiesCommand(CLI::App& app) {
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "strategies",
      "The gathered batched matmul out[n] = a[n] @ c[q[n]] (a [N,I,J], c [M,J,K], q [N]) with the "
      "four strategies of the PyTorch forum post \"Many weird phenomena about torch.matmul()\" "
      "and a fused one; reports time, curMem/maxMem and what stays alive and why");
  auto option = [&](const char* name, std::string& into, const char* help, const char* type) {
    cmd->add_option(name, into, help)->type_name(type);
  };
  option("--n", o->n, "N: rows of a and of q (default 131072)", "INT");
  option("--m", o->m, "M: matrices in c (default 2048)", "INT");
  option("--i", o->i, "I: rows of each a[n] (default 1)", "INT");
  option("--j", o->j, "J: the contracted dimension (default 64)", "INT");
  option("--k", o->k, "K: columns of each c[m] (default 64)", "INT");
  option("--batch", o->batch, "strategy3's batch (default 256)", "INT");
  option("--dtype", o->dtype, "float32 | float16 | bfloat16 (default float32)", "DTYPE");
  option("--requires-grad", o->requiresGrad, "none | a | c | a,c (default none)", "WHICH");
  option("--strategies", o->strategies,
         "comma-separated: strategy1,strategy2,strategy3,direct,fused (default all)", "LIST");
  option("--repeats", o->repeats,
         "runs per strategy; the first is reported as cold, median/min/max are over the others "
         "(default 3)",
         "INT");
  option("--seed", o->seed, "seed of the random a, c, q and grad_output (default 0)", "INT");
  option("--device", o->device,
         "cpu (real data, BLAS) | meta (memory only) | cuda (the GPU: engine kernels, cuBLAS; "
         "float32)",
         "DEVICE");
  option("--device-memory", o->deviceMemory, "capacity of the simulated device, e.g. 1GiB", "SIZE");
  cmd->add_flag("--backward", o->backward,
                "also run backward with a random grad_output and check dA, dC");
  cmd->add_flag("--force", o->force,
                "run a backward even when it is estimated to take over a minute");
  option("--preset", o->preset, "a preset scenario: seed000, seed000-grad, small, huge-meta",
         "NAME");
  option("--json", o->json,
         "write the report as JSON to PATH, or - for stdout. max_rel_err (and a backward's "
         "max_rel_err_da/_dc) is null when not computed (meta) or not finite: NaN or Inf in out, "
         "dA or dC or its float64 reference fails the check (\"accuracy_failed\": true, the "
         "run's \"warnings\" name the tensor, exit code 1)",
         "PATH|-");
  option("--timeline", o->timeline, "write the memory timeline as a Chrome trace to PATH", "PATH");
  option("--a", o->aPath, "a from a .npy file [N, I, J]", "FILE.npy");
  option("--c", o->cPath, "c from a .npy file [M, J, K]", "FILE.npy");
  option("--q", o->qPath, "q from a .npy file [N], int64", "FILE.npy");
  option("--grad-output", o->gradOutputPath, "grad_output from a .npy file [N, I, K]", "FILE.npy");
  option("--model", o->model,
         "add the cost model's predicted GPU time (a model, not a measurement): h100 | a100 | t4",
         "GPU");
  option("--save-dir", o->saveDir, "write DIR/<strategy>/{out,dA,dC,grad_output}.npy", "DIR");
  return [o, cmd] { return run(*o, *cmd); };
}

}  // namespace matmulviz::cli
