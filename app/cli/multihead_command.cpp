// matmulviz-cli multihead: the multi-head matmul assignment's matmul_with_importance (multi-head
// matmul over the important tokens) with its gradients, on a fresh device (cpu, or a GPU); prints
// or writes a report of O3's shape, t, the gradients' norms, the allocations and what was saved for
// backward.
#include "app/cli/commands.h"
#include "app/cli/cuda_option.h"
#include "app/cli/emit_outputs.h"
#include "app/cli/output_files.h"
#include "app/cli/text_options.h"
#include "core/io/npy.h"
#include "core/multihead/multihead_report.h"
#include "core/report/chrome_trace.h"
#include "core/report/report_envelope.h"
#include "core/util/format_units.h"
#include "core/util/parse_size.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <string>
#include <tuple>
#include <vector>

namespace matmulviz::cli {

namespace {

struct MultiheadOptions {
  std::string b = "2", s = "8", h = "16", e = "4", heads = "4", topP = "1.0", topK;
  std::string dtype = "float32", seed = "0", json, saveDir, timeline, device = "cpu";
  std::string a1Path, pPath, w1Path, gradOutputPath;
  bool backward = false;
};

constexpr int64_t kMaxHeadSize = int64_t{1} << 31;

/// Core messages name the Python arguments ("num_heads: ..."): the CLI's names replace them.
std::string multiheadMessage(const std::string& msg) {
  static const std::pair<const char*, const char*> names[] = {{"num_heads:", "--heads:"},
                                                              {"top_p:", "--top-p:"},
                                                              {"top_k:", "--top-k:"},
                                                              {"A1:", "--A1:"},
                                                              {"P:", "--P:"},
                                                              {"W1:", "--W1:"},
                                                              {"dtype:", "--dtype:"},
                                                              {"grad_output:", "--grad-output:"}};
  for (const auto& [core, cli] : names)
    if (msg.rfind(core, 0) == 0) return cli + msg.substr(std::string(core).size());
  return msg;
}

double parseTopP(const std::string& text) {
  size_t used = 0;
  double v = NAN;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size())
    throw std::invalid_argument("--top-p: '" + text + "' is not a number (allowed: 0 to 1)");
  if (!(v >= 0.0 && v <= 1.0))
    throw std::invalid_argument("--top-p: " + text + " is outside [0, 1]");
  return v;
}

/// A .npy input of rank `shape.size()`; -1 entries take the file's size.
Tensor readInput(const std::string& path, const char* arg, const Shape& shape) {
  return npy::readChecked(path, arg, {DType::Float32, DType::Float16, DType::Float64}, shape);
}

/// Sizes from the options, or from the .npy inputs where an option was not given.
MultiheadConfig buildConfig(const MultiheadOptions& o, const CLI::App& cmd, MultiheadInputs& in) {
  auto given = [&](const char* name) { return cmd.get_option(name)->count() > 0; };
  MultiheadConfig c;
  auto size = [&](const char* arg, const std::string& text) {
    return given(arg) ? parsePositiveInt(text, arg, 1, kMaxHeadSize) : int64_t{-1};
  };
  int64_t b = size("--b", o.b), s = size("--s", o.s), h = size("--h", o.h), e = size("--e", o.e);
  if (!o.a1Path.empty()) {
    in.A1 = readInput(o.a1Path, "--A1", {b, s, h});
    b = in.A1.size(0), s = in.A1.size(1), h = in.A1.size(2);
  }
  if (!o.w1Path.empty()) {
    in.W1 = readInput(o.w1Path, "--W1", {h, e});
    h = in.W1.size(0), e = in.W1.size(1);
  }
  if (!o.pPath.empty()) {
    in.P = readInput(o.pPath, "--P", {b, s});
    b = in.P.size(0), s = in.P.size(1);
  }
  c.b = b > 0 ? b : parsePositiveInt(o.b, "--b", 1, kMaxHeadSize);
  c.s = s > 0 ? s : parsePositiveInt(o.s, "--s", 1, kMaxHeadSize);
  c.h = h > 0 ? h : parsePositiveInt(o.h, "--h", 1, kMaxHeadSize);
  c.e = e > 0 ? e : parsePositiveInt(o.e, "--e", 1, kMaxHeadSize);
  if (c.b * c.s > kMaxHeadSize || c.b * c.s * c.h > kMaxHeadSize || c.h * c.e > kMaxHeadSize ||
      c.b * c.s * c.e > kMaxHeadSize)
    throw std::invalid_argument("--b/--s/--h/--e: a tensor would hold more than 2^31 elements");
  c.numHeads = parsePositiveInt(o.heads, "--heads", 1, kMaxHeadSize);
  if (c.h % c.numHeads != 0)
    throw std::invalid_argument("--heads: " + std::to_string(c.numHeads) + " does not divide --h " +
                                std::to_string(c.h) +
                                " (the hidden size is split evenly into heads)");
  c.topP = parseTopP(o.topP);
  if (given("--top-k")) {
    c.topK = parsePositiveInt(o.topK, "--top-k", 1, c.s);  // at most s, the sequence length
  }
  c.dtype = parseDType(o.dtype);
  c.backward = o.backward || !o.gradOutputPath.empty();
  c.seed = static_cast<uint64_t>(parsePositiveInt(o.seed, "--seed", 0));
  c.recordTimeline = true;
  c.validate();
  if (!o.gradOutputPath.empty()) in.gradOutput = readInput(o.gradOutputPath, "--grad-output", {});
  return c;
}

nlohmann::ordered_json keptJson(const std::vector<KeptAlive>& list) {
  auto j = nlohmann::ordered_json::array();
  for (const KeptAlive& k : list)
    j.push_back({{"label", k.label}, {"bytes", k.bytes}, {"count", k.count}, {"why", k.why}});
  return j;
}

/// null when absent (NaN) or not finite (JSON has neither; "warnings" tell the two apart).
nlohmann::ordered_json normJson(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}

/// One line per output (O3, dA1, dW1) that holds NaN or Inf: its norm is not finite, and the
/// run's check fails. Empty when every output computed is finite.
std::vector<std::string> nonFiniteOutputs(const MultiheadReport& r) {
  std::vector<std::string> warnings;
  for (const auto& [t, norm, name] :
       {std::tuple{&r.O3, r.normO3, "O3"}, {&r.dA1, r.normDA1, "dA1"}, {&r.dW1, r.normDW1, "dW1"}})
    if (t->defined() && !std::isfinite(norm))
      warnings.push_back(std::string(name) + " holds NaN or Inf (|" + name +
                         "| is not finite): the check fails; are the inputs finite?");
  return warnings;
}

nlohmann::ordered_json toJson(const MultiheadReport& r) {
  const MultiheadConfig& c = r.config;
  nlohmann::ordered_json j = reportEnvelope("multihead");
  j["workload"] = {{"b", c.b},
                   {"s", c.s},
                   {"h", c.h},
                   {"e", c.e},
                   {"num_heads", c.numHeads},
                   {"head_dim", c.h / c.numHeads},
                   {"top_p", c.topP},
                   {"top_k", c.topK ? nlohmann::ordered_json(*c.topK) : nullptr},
                   {"dtype", std::string(dtypeName(c.dtype))},
                   {"backward", c.backward},
                   {"seed", c.seed}};
  j["device"] = std::string(deviceKindName(r.device));  // where strategies puts it
  j["t"] = r.t;
  j["O3_shape"] = {r.t, c.numHeads, c.e};
  auto mask = nlohmann::ordered_json::array();
  for (int64_t i = 0; i < c.b && c.b * c.s <= 65536; ++i) {
    std::string row;
    for (int64_t x = 0; x < c.s; ++x) row += r.mask[i * c.s + x] ? '1' : '0';
    mask.push_back(row);
  }
  j["mask"] = mask;
  j["norms"] = {
      {"O3", normJson(r.normO3)}, {"dA1", normJson(r.normDA1)}, {"dW1", normJson(r.normDW1)}};
  const std::vector<std::string> warnings = nonFiniteOutputs(r);
  j["accuracy_failed"] = !warnings.empty();
  j["warnings"] = warnings;
  j["time_s"] = r.timeSeconds;
  // FLOPs as PyTorch's FlopCounterMode counts them; backward null without --backward.
  j["flops"] = {{"forward", r.forwardFlops},
                {"backward", c.backward ? nlohmann::ordered_json(r.backwardFlops) : nullptr}};
  j["memory"] = {{"cur_mem_bytes", r.current.allocatedBytes},
                 {"max_mem_bytes", r.peak.allocatedBytes},
                 {"cur_mem_mib", toMiBFloor(r.current.allocatedBytes)},
                 {"max_mem_mib", toMiBFloor(r.peak.allocatedBytes)},
                 {"inputs_bytes", r.afterInputs.allocatedBytes},
                 {"reserved_peak_bytes", r.peak.reservedBytes},
                 {"saved_for_backward_bytes", r.savedBytes}};
  j["saved_for_backward"] = keptJson(r.savedForBackward);
  j["kept_alive"] = keptJson(r.keptAlive);
  auto allocs = nlohmann::ordered_json::array();
  for (const AllocationRecord& rec : r.timeline.records)
    allocs.push_back({{"id", rec.id},
                      {"label", rec.label},
                      {"op", r.timeline.opNames.at(static_cast<size_t>(rec.opId))},
                      {"requested_bytes", rec.requestedBytes},
                      {"block_bytes", rec.blockBytes},
                      {"alive_after", rec.alive}});
  j["allocations"] = allocs;
  return j;
}

void writeText(std::ostream& os, const MultiheadReport& r) {
  const MultiheadConfig& c = r.config;
  os << "matmul_with_importance: A1 [" << c.b << ", " << c.s << ", " << c.h << "], W1 [" << c.h
     << ", " << c.e << "], " << c.numHeads << " heads of " << c.h / c.numHeads << ", top_p "
     << c.topP << ", top_k " << (c.topK ? std::to_string(*c.topK) : "none") << ", "
     << dtypeName(c.dtype) << ", on " << deviceKindName(r.device) << "\n";
  os << "  t = " << r.t << " important tokens; O3 [" << r.t << ", " << c.numHeads << ", " << c.e
     << "], |O3| = " << r.normO3 << "\n";
  if (r.t == 0)
    os << "  no token is important: P >= top_p and top_k select none (with random P in [0, 1), "
          "top_p 1.0 keeps nothing; try --top-p 0.5)\n";
  if (c.backward) os << "  |dA1| = " << r.normDA1 << ", |dW1| = " << r.normDW1 << "\n";
  os << "  curMem " << formatSize(r.current.allocatedBytes) << ", maxMem "
     << formatSize(r.peak.allocatedBytes) << " (inputs " << formatSize(r.afterInputs.allocatedBytes)
     << "); saved for backward " << formatSize(r.savedBytes) << " of new memory\n";
  for (const KeptAlive& k : r.savedForBackward)
    os << "    saved: " << k.label << ", " << formatSize(k.bytes) << ": " << k.why << "\n";
  for (const KeptAlive& k : r.keptAlive)
    os << "    alive after: " << k.label << ", " << formatSize(k.bytes) << ": " << k.why << "\n";
  for (const std::string& w : nonFiniteOutputs(r)) os << "warning: " << w << "\n";
}

/// The memory timeline as a Chrome trace (one process, the call's ops and allocations).
void writeTrace(std::ostream& os, const MultiheadReport& r) {
  StrategiesReport trace;
  StrategyRun run;
  run.strategy = "matmul_with_importance";
  run.timeline = r.timeline;
  trace.runs.push_back(std::move(run));
  writeChromeTrace(os, trace, 0);
}

void saveOutputs(const std::string& dir, const MultiheadReport& r) {
  namespace fs = std::filesystem;
  const fs::path d(dir);
  std::error_code ec;
  fs::create_directories(d, ec);
  if (ec) throw std::runtime_error("cannot create '" + dir + "': " + ec.message());
  const MultiheadInputs& in = r.inputs;
  for (const auto& [t, name] : {std::pair{&in.A1, "A1"},
                                {&in.P, "P"},
                                {&in.W1, "W1"},
                                {&in.gradOutput, "grad_output"},
                                {&r.O3, "O3"},
                                {&r.dA1, "dA1"},
                                {&r.dW1, "dW1"}})
    if (t->defined()) npy::write((d / (std::string(name) + ".npy")).string(), *t);
  std::vector<double> mask(r.mask.begin(), r.mask.end());
  npy::write((d / "mask.npy").string(), fromDoubles({r.config.b, r.config.s}, mask, DType::Int64));
}

int runMultiheadCommand(const MultiheadOptions& o, const CLI::App& cmd) {
  MultiheadConfig config;
  MultiheadInputs inputs;
  try {
    config = buildConfig(o, cmd, inputs);
    ComputeDevice device = parseComputeDevice(o.device, config.dtype);
    if (device.noGpu) {
      std::cerr << "matmulviz-cli multihead: " << *device.noGpu << "\n";
      return 1;
    }
    config.deviceFactory = std::move(device.factory);
    checkOutputPath(o.json, "--json");
    if (o.timeline == "-")
      throw std::invalid_argument("--timeline: '-' is not allowed: give a file path");
    checkOutputPath(o.timeline, "--timeline");
    inputs = prepareMultiheadInputs(config, std::move(inputs));
    // Last: it creates the directory, which a refused run must not leave behind.
    if (cmd.get_option("--save-dir")->count() > 0) checkOutputDirectory(o.saveDir, "--save-dir");
  } catch (const std::invalid_argument& e) {
    std::cerr << "matmulviz-cli multihead: " << multiheadMessage(e.what()) << "\n";
    return 2;
  } catch (const npy::NpyError& e) {
    std::cerr << "matmulviz-cli multihead: " << e.what() << "\n";
    return 2;
  }
  MultiheadReport report;
  try {
    report = runMultihead(config, std::move(inputs));
  } catch (const std::invalid_argument& e) {
    std::cerr << "matmulviz-cli multihead: " << multiheadMessage(e.what()) << "\n";
    return 2;
  } catch (const std::exception& e) {  // OutOfMemoryError, std::bad_alloc, CudaError
    std::cerr << "matmulviz-cli multihead: the run failed: " << e.what() << "\n";
    return 1;
  }
  ReportWriters w;
  w.json = toJson(report);
  w.text = [&](std::ostream& os) { writeText(os, report); };
  w.trace = [&](std::ostream& os) { writeTrace(os, report); };
  w.save = [&](const std::string& dir) { saveOutputs(dir, report); };
  w.warnings = nonFiniteOutputs(report);
  if (emitOutputs({"multihead", o.json, o.timeline, o.saveDir}, w) != 0) return 1;
  return w.warnings.empty() ? 0 : 1;  // NaN or Inf in an output: the check failed
}

}  // namespace

Action addMultiheadCommand(CLI::App& app) {
  auto o = std::make_shared<MultiheadOptions>();
  CLI::App* cmd = app.add_subcommand(
      "multihead",
      "matmul_with_importance of the multi-head matmul assignment: O3 = multi-head matmul of the "
      "important tokens of A1 [b,s,h] (P >= top_p "
      "and among the top_k of their sequence) with W1 [h,e]; with --backward also dA1, dW1; "
      "reports memory and what was saved for backward");
  const TextOptions option{*cmd};
  option("--b", o->b, "batch size b (default 2, or from --A1)", "INT");
  option("--s", o->s, "sequence length s (default 8, or from --A1)", "INT");
  option("--h", o->h, "hidden size h (default 16, or from --A1)", "INT");
  option("--e", o->e, "embed size e (default 4, or from --W1)", "INT");
  option("--heads", o->heads, "number of heads nh; must divide h (default 4)", "INT");
  option("--top-p", o->topP, "important: P >= top_p, in [0, 1] (default 1.0)", "FLOAT");
  option("--top-k", o->topK, "... and among the top_k of its sequence, in [1, s] (default s)",
         "INT");
  option("--dtype", o->dtype, "float32 | float16 | bfloat16 (default float32)", "DTYPE");
  cmd->add_flag("--backward", o->backward,
                "also compute dA1 and dW1 with a grad_output (random N(0,1) unless given)");
  option("--seed", o->seed, "seed of the random inputs (default 0)", "INT");
  option("--device", o->device, "cpu | cuda (a GPU, float32) (default cpu)", "DEVICE");
  option("--json", o->json,
         "write the report as JSON to PATH, or - for stdout; a norm is null when its tensor is "
         "absent or not finite (NaN or Inf in O3, dA1 or dW1: \"accuracy_failed\": true, "
         "\"warnings\" say which, exit code 1)",
         "PATH|-");
  option("--save-dir", o->saveDir,
         "write DIR/{A1,P,W1,grad_output,O3,dA1,dW1,mask}.npy (float32 for bfloat16)", "DIR");
  option("--timeline", o->timeline, "write the memory timeline as a Chrome trace to PATH", "PATH");
  option("--A1", o->a1Path, "A1 from a .npy file [b, s, h]", "FILE.npy");
  option("--P", o->pPath, "P from a .npy file [b, s]", "FILE.npy");
  option("--W1", o->w1Path, "W1 from a .npy file [h, e]", "FILE.npy");
  option("--grad-output", o->gradOutputPath,
         "grad_output from a .npy file [t, nh, e] (implies --backward)", "FILE.npy");
  return [o, cmd] { return runMultiheadCommand(*o, *cmd); };
}

}  // namespace matmulviz::cli
