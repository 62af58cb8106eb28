// matmulviz-cli strategies: the seed's gathered batched matmul with each strategy; prints or
// writes the report (README, "More of the command line").
#include "app/cli/bad_input_text.h"
#include "app/cli/commands.h"
#include "app/cli/cuda_option.h"
#include "app/cli/emit_outputs.h"
#include "app/cli/output_files.h"
#include "app/cli/run_for_cli.h"
#include "app/cli/scenario_options.h"
#include "core/costmodel/cost_model.h"
#include "core/costmodel/profile_file.h"
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

struct StrategiesOptions {
  ScenarioOptions scenario;
  std::string json, timeline, saveDir, aPath, cPath, qPath, gradOutputPath, model;
  bool force = false;
  std::optional<costmodel::GpuProfile> gpu;  ///< --model, resolved (a key or a profile file)
};

/// The scenario options, then this command's own. Throws BadInput or invalid_argument.
RunConfig buildConfig(const StrategiesOptions& o, const CLI::App& cmd) {
  RunConfig c = scenarioConfig(o.scenario, cmd);
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

Inputs loadInputs(const StrategiesOptions& o, const RunConfig& c) {
  const Workload& w = c.workload;
  const bool withData = c.device != DeviceKind::Meta;
  Inputs in = makeRandomInputs(w, c.seed, withData);
  const std::vector<DType> floats{DType::Float32, DType::Float16, DType::Float64};
  if (!o.aPath.empty()) in.a = readInput(o.aPath, "--a", floats, {w.n, w.i, w.j}, w.dtype);
  if (!o.cPath.empty()) in.c = readInput(o.cPath, "--c", floats, {w.m, w.j, w.k}, w.dtype);
  if (!o.qPath.empty()) in.q = npy::readChecked(o.qPath, "--q", {DType::Int64}, {w.n});
  return in;
}

/// The prediction as the text report's last section, labelled as a model, each strategy with
/// how its time comes about ("rows: 131072 x 3 ops x 6 us on the host ...").
void writePredictions(std::ostream& os, const StrategiesReport& report,
                      const costmodel::GpuProfile& gpu) {
  os << "\npredicted forward time on " << gpu.name
     << " (a model, not a measurement: PyTorch's host time per op and per blocking copy, and per "
        "kernel max(bytes / bandwidth, flops / rate) + launch latency; "
     << gpu.source << "):\n";
  for (const StrategyRun& r : report.runs) {
    const auto predicted = costmodel::predictRun(report.workload, r.strategy, gpu);
    if (!predicted) continue;
    const costmodel::WorkCounts& counts = predicted->counts;
    const costmodel::Prediction& p = predicted->prediction;
    char line[256];
    const std::string bound = std::string(p.bound) + "-bound";
    std::snprintf(line, sizeof line, "  %-10s %10s  %-14s %8llu launches %10s moved\n",
                  r.strategy.c_str(), formatSeconds(p.totalS).c_str(), bound.c_str(),
                  static_cast<unsigned long long>(counts.launches),
                  formatSize(static_cast<int64_t>(counts.bytesRead + counts.bytesWritten)).c_str());
    os << line << "             " << p.explanation << "\n";
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
int emitReport(const StrategiesOptions& o, const StrategiesReport& report) {
  const costmodel::GpuProfile* gpu = o.gpu ? &*o.gpu : nullptr;
  ReportWriters w;
  // With --timeline the report holds the timeline too (for the app and `export --report`),
  // written compact: indented, its event rows would take three times the space.
  const bool timelines = !o.timeline.empty();
  w.json = toJson(report, timelines ? TimelineInJson::Include : TimelineInJson::Omit);
  w.jsonIndent = timelines ? -1 : 2;
  if (gpu) costmodel::addPredictions(w.json, report, *gpu);
  w.text = [&](std::ostream& os) {
    writeTextReport(os, report);
    if (gpu) writePredictions(os, report, *gpu);
  };
  w.trace = [&](std::ostream& os) { writeChromeTrace(os, report); };
  w.save = [&](const std::string& dir) { saveOutputs(dir, report); };
  for (const StrategyRun& r : report.runs)
    for (const std::string& warning : r.accuracyWarnings)
      w.warnings.push_back(r.strategy + ": " + warning);
  if (emitOutputs({"strategies", o.json, o.timeline, o.saveDir}, w) != 0) return 1;
  return report.anyFailed() || report.anyAccuracyFailed() ? 1 : 0;
}

int runStrategiesCommand(StrategiesOptions& o, const CLI::App& cmd) {
  RunConfig config;
  Inputs inputs;
  Tensor gradOutput;
  try {
    config = buildConfig(o, cmd);
    if (!o.model.empty()) o.gpu = costmodel::resolveGpuProfile(o.model);
    if (const auto noGpu = prepareCudaDevice(config, o.gpu ? &*o.gpu : nullptr)) {
      std::cerr << "matmulviz-cli strategies: " << *noGpu << "\n";
      return 1;
    }
    checkOutputPath(o.json, "--json");
    if (o.timeline == "-")
      throw std::invalid_argument(
          "--timeline: '-' is not allowed: give a file path (the trace is "
          "large, and --json - already uses stdout)");
    checkOutputPath(o.timeline, "--timeline");
    // Checks everything before any allocation, then makes the inputs (random, or --a/--c/--q).
    PreparedRun prepared = prepareRun(config, [&](const RunConfig& c) { return loadInputs(o, c); });
    config = std::move(prepared.config);
    inputs = std::move(prepared.inputs);
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
  auto o = std::make_shared<StrategiesOptions>();
  CLI::App* cmd = app.add_subcommand(
      "strategies",
      "The gathered batched matmul out[n] = a[n] @ c[q[n]] (a [N,I,J], c [M,J,K], q [N]) with the "
      "four strategies of the PyTorch forum post \"Many weird phenomena about torch.matmul()\" "
      "and a fused one; reports time, curMem/maxMem and what stays alive and why");
  addScenarioOptions(*cmd, o->scenario, ScenarioDefaults::Builtin,
                     "cpu (real data, BLAS) | meta (memory only) | cuda (the GPU: engine kernels, "
                     "cuBLAS; float32) (default cpu)");
  const TextOptions option{*cmd};
  cmd->add_flag("--force", o->force,
                "run a backward even when it is estimated to take over a minute (on any device: "
                "on cuda the estimate uses the GPU profile's bandwidth)");
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
         "add the cost model's predicted GPU time (a model, not a measurement): h200 | h100 | "
         "a100 | t4, or a profile file written by `matmulviz-cli calibrate`; on --device cuda "
         "it is also the bandwidth a backward's estimate uses (default: the profile the GPU's "
         "name names)",
         "GPU|FILE");
  option("--save-dir", o->saveDir, "write DIR/<strategy>/{out,dA,dC,grad_output}.npy", "DIR");
  return [o, cmd] { return runStrategiesCommand(*o, *cmd); };
}

}  // namespace matmulviz::cli
