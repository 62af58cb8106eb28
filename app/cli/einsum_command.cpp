// matmulviz-cli einsum: torch.einsum on the engine (the fast.ai lesson), on a fresh device (cpu, or
// a GPU): the output's shape, the time, curMem/maxMem and every allocation the contraction made.
#include "app/cli/commands.h"
#include "app/cli/cuda_option.h"
#include "app/cli/emit_outputs.h"
#include "app/cli/output_files.h"
#include "core/autograd/grad_mode.h"
#include "core/io/npy.h"
#include "core/ops/einsum.h"
#include "core/ops/flop_counter.h"
#include "core/ops/ops.h"
#include "core/report/report_envelope.h"
#include "core/report/report_inputs.h"
#include "core/strategies/workload.h"
#include "core/util/format_units.h"
#include "core/util/parse_size.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <random>
#include <sstream>

namespace matmulviz::cli {

namespace {

struct EinsumOptions {
  std::string equation, shapes, dtype = "float32", seed = "0", json, inputs, saveDir;
  std::string device = "cpu";
};

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::stringstream ss(text);
  for (std::string p; std::getline(ss, p, sep);) parts.push_back(p);
  if (!text.empty() && text.back() == sep) parts.emplace_back();
  return parts;
}

/// "2x3,3x4" -> {{2, 3}, {3, 4}}; "-" or "scalar" is a 0-d operand.
std::vector<Shape> parseShapes(const std::string& text) {
  std::vector<Shape> shapes;
  for (const std::string& part : split(text, ',')) {
    Shape s;
    if (part != "scalar")
      for (const std::string& n : split(part, 'x'))
        s.push_back(parsePositiveInt(n, "--shapes", 0, int64_t{1} << 31));
    shapes.push_back(s);
  }
  if (shapes.empty())
    throw std::invalid_argument("--shapes: give one shape per operand, e.g. 2x3,3x4");
  int64_t total = 0;
  for (const Shape& s : shapes) total += numelOf(s);
  if (total > (int64_t{1} << 31))
    throw std::invalid_argument("--shapes: the operands would hold more than 2^31 elements");
  return shapes;
}

/// Host operands: from --inputs (checked against --shapes when given) or random.
std::vector<Tensor> loadOperands(const EinsumOptions& o, DType dtype) {
  std::vector<Tensor> ops;
  const std::vector<Shape> shapes = o.shapes.empty() ? std::vector<Shape>{} : parseShapes(o.shapes);
  if (o.inputs.empty()) {
    if (shapes.empty()) throw std::invalid_argument("--shapes: required unless --inputs is given");
    const uint64_t seed = static_cast<uint64_t>(parsePositiveInt(o.seed, "--seed", 0));
    for (size_t i = 0; i < shapes.size(); ++i)
      ops.push_back(randomNormalHost(shapes[i], dtype, seed + i, "operand"));
    return ops;
  }
  const auto paths = split(o.inputs, ',');
  if (!shapes.empty() && shapes.size() != paths.size())
    throw std::invalid_argument("--inputs: " + std::to_string(paths.size()) +
                                " files but --shapes gives " + std::to_string(shapes.size()) +
                                " shapes");
  for (size_t i = 0; i < paths.size(); ++i) {
    Shape want = shapes.empty() ? Shape{} : shapes[i];
    Tensor t = npy::readChecked(paths[i], "--inputs",
                                {DType::Float32, DType::Float16, DType::Float64}, want);
    if (!shapes.empty() && t.sizes() != want)  // a 0-d expectation accepts any shape
      throw std::invalid_argument("--inputs: '" + paths[i] + "' has shape " + t.shapeString() +
                                  " but --shapes gives " + shapeToString(want));
    ops.push_back(t.dtype() == dtype ? t : toDType(t, dtype));
  }
  return ops;
}

struct EinsumRun {
  Tensor out;  // host
  DeviceKind device = DeviceKind::Cpu;
  double timeS = 0;
  double maxRelErr = 0;  ///< NaN or Inf when out or its float64 reference is not finite
  std::string warning;   ///< why the accuracy check failed; empty when it passed
  MemoryCounters inputs, current, peak;
  nlohmann::ordered_json allocations = nlohmann::ordered_json::array();
  /// FLOPs as PyTorch's FlopCounterMode counts them (core/ops/flop_counter.h): its bmm calls.
  int64_t flops = 0;
};

/// Runs the contraction on a fresh device (`factory`'s, or the cpu device), timed up to the end
/// of the device's queued work.
EinsumRun runEinsum(const std::string& equation, const std::vector<Tensor>& hostOps,
                    const DeviceFactory& factory) {
  const DevicePtr device =
      makeDevice(DeviceKind::Cpu, CachingAllocator::Options{std::nullopt, true}, factory);
  NoGradGuard noGrad;
  std::vector<Tensor> ops;
  for (size_t i = 0; i < hostOps.size(); ++i)
    ops.push_back(toDevice(hostOps[i], device, "operand " + std::to_string(i)));
  EinsumRun r;
  r.device = device->kind();
  r.inputs = device->allocator().current();
  const auto t0 = std::chrono::steady_clock::now();
  FlopCounter flops;
  Tensor out = einsum(equation, ops);
  r.flops = flops.total();
  device->synchronize();  // a GPU's queued work
  r.timeS = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out.setLabel("einsum output");
  r.current = device->allocator().current();
  r.peak = device->allocator().peak();
  const auto& alloc = device->allocator();
  std::vector<AllocationRecord> recs;
  for (const auto& [id, rec] : alloc.records()) recs.push_back(rec);
  std::sort(recs.begin(), recs.end(), [](auto& x, auto& y) { return x.id < y.id; });
  for (const auto& rec : recs)
    r.allocations.push_back({{"id", rec.id},
                             {"label", rec.label},
                             {"op", alloc.opNames().at(static_cast<size_t>(rec.opId))},
                             {"requested_bytes", rec.requestedBytes},
                             {"block_bytes", rec.blockBytes},
                             {"alive_after", rec.alive}});
  r.out = toDevice(out, nullptr, "out");
  std::vector<Tensor> ref;
  for (const Tensor& t : hostOps) ref.push_back(toDType(t, DType::Float64));
  const Tensor refOut = einsum(equation, ref);
  r.maxRelErr = maxRelativeError(r.out, refOut);
  r.warning = nonFiniteWarning("out", r.out, refOut);
  return r;
}

nlohmann::ordered_json toJson(const std::string& equation, DType dtype,
                              const std::vector<Tensor>& ops, const EinsumRun& r) {
  nlohmann::ordered_json j = reportEnvelope("einsum");
  j["equation"] = equation;
  j["dtype"] = std::string(dtypeName(dtype));
  j["device"] = std::string(deviceKindName(r.device));
  auto shapes = nlohmann::ordered_json::array();
  for (const Tensor& t : ops) shapes.push_back(t.sizes());
  j["operand_shapes"] = shapes;
  j["output_shape"] = r.out.sizes();
  j["time_s"] = r.timeS;
  // FLOPs as PyTorch's FlopCounterMode counts them; einsum runs no backward here (null).
  j["flops"] = {{"forward", r.flops}, {"backward", nullptr}};
  j["max_rel_err"] = std::isfinite(r.maxRelErr) ? nlohmann::ordered_json(r.maxRelErr) : nullptr;
  j["accuracy_failed"] = !r.warning.empty();
  j["warnings"] = r.warning.empty() ? nlohmann::ordered_json::array()
                                    : nlohmann::ordered_json::array({r.warning});
  j["memory"] = {{"inputs_bytes", r.inputs.allocatedBytes},
                 {"cur_mem_bytes", r.current.allocatedBytes},
                 {"max_mem_bytes", r.peak.allocatedBytes}};
  j["allocations"] = r.allocations;
  return j;
}

void writeText(std::ostream& os, const std::string& equation, DType dtype, const EinsumRun& r) {
  os << "einsum('" << equation << "') -> " << r.out.shapeString() << " " << dtypeName(dtype)
     << " on " << deviceKindName(r.device) << ", " << formatSeconds(r.timeS)
     << ", max_rel_err vs float64 " << r.maxRelErr << "\n"
     << "  curMem " << formatSize(r.current.allocatedBytes) << ", maxMem "
     << formatSize(r.peak.allocatedBytes) << " (operands " << formatSize(r.inputs.allocatedBytes)
     << ")\n";
  for (const auto& a : r.allocations)
    os << "  alloc " << a["label"].get<std::string>() << " by " << a["op"].get<std::string>()
       << ": " << formatSize(a["block_bytes"].get<int64_t>())
       << (a["alive_after"].get<bool>() ? " (alive)" : "") << "\n";
  if (!r.warning.empty()) os << "warning: " << r.warning << "\n";
}

int runEinsumCommand(const EinsumOptions& o, const CLI::App& cmd) {
  DType dtype{};
  std::vector<Tensor> ops;
  try {
    dtype = parseDType(o.dtype);
    if (dtype != DType::Float32 && dtype != DType::Float16 && dtype != DType::BFloat16)
      throw std::invalid_argument("'" + o.dtype +
                                  "' is not allowed (allowed: float32, float16, bfloat16)");
  } catch (const std::invalid_argument& e) {
    std::cerr << "matmulviz-cli einsum: --dtype: " << e.what() << "\n";
    return 2;
  }
  EinsumRun r;
  try {
    ComputeDevice device = parseComputeDevice(o.device, dtype);
    if (device.noGpu) {
      std::cerr << "matmulviz-cli einsum: " << *device.noGpu << "\n";
      return 1;
    }
    checkOutputPath(o.json, "--json");
    ops = loadOperands(o, dtype);
    // Last: it creates the directory, which a refused run must not leave behind.
    if (cmd.get_option("--save-dir")->count() > 0) checkOutputDirectory(o.saveDir, "--save-dir");
    r = runEinsum(o.equation, ops, device.factory);
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    std::cerr << "matmulviz-cli einsum: " << (msg.rfind("--", 0) == 0 ? "" : "EQUATION: ") << msg
              << "\n";
    return 2;
  } catch (const npy::NpyError& e) {
    std::cerr << "matmulviz-cli einsum: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "matmulviz-cli einsum: the run failed: " << e.what() << "\n";
    return 1;
  }
  ReportWriters w;
  w.json = toJson(o.equation, dtype, ops, r);
  w.text = [&](std::ostream& os) { writeText(os, o.equation, dtype, r); };
  w.save = [&](const std::string& dir) {
    const std::filesystem::path d(dir);
    std::error_code ec;
    std::filesystem::create_directories(d, ec);
    if (ec) throw std::runtime_error("cannot create '" + dir + "': " + ec.message());
    for (size_t i = 0; i < ops.size(); ++i)
      npy::write((d / ("operand" + std::to_string(i) + ".npy")).string(), ops[i]);
    npy::write((d / "out.npy").string(), r.out);
  };
  if (!r.warning.empty()) w.warnings.push_back(r.warning);
  if (emitOutputs({"einsum", o.json, "", o.saveDir}, w) != 0) return 1;
  return r.warning.empty() ? 0 : 1;  // NaN or Inf: the accuracy check failed
}

}  // namespace

Action addEinsumCommand(CLI::App& app) {
  auto o = std::make_shared<EinsumOptions>();
  CLI::App* cmd = app.add_subcommand(
      "einsum",
      "torch.einsum on the engine (as in the fast.ai lesson \"Finishing up Matmul\"): operands "
      "contracted pairwise through bmm as PyTorch does; "
      "reports the output shape, time, curMem/maxMem and every allocation");
  cmd->add_option("EQUATION", o->equation,
                  "e.g. 'ik,kj->ij', 'bsnd,nde->bsne', 'ii->i', '...ij,jk'")
      ->required();
  cmd->add_option("--shapes", o->shapes, "operand shapes, e.g. 2x3,3x4 ('scalar' for 0-d)")
      ->type_name("SHAPES");
  cmd->add_option("--dtype", o->dtype, "float32 | float16 | bfloat16 (default float32)")
      ->type_name("DTYPE");
  cmd->add_option("--seed", o->seed, "seed of the random operands (default 0)")->type_name("INT");
  cmd->add_option("--device", o->device, "cpu | cuda (a GPU, float32) (default cpu)")
      ->type_name("DEVICE");
  cmd->add_option("--inputs", o->inputs, "operands from .npy files, comma-separated")
      ->type_name("A.npy,B.npy");
  cmd->add_option("--json", o->json,
                  "write the report as JSON to PATH, or - for stdout; max_rel_err is null when "
                  "not finite (NaN or Inf in the output or its float64 reference: "
                  "\"accuracy_failed\": true, \"warnings\" say which, exit code 1)")
      ->type_name("PATH|-");
  cmd->add_option("--save-dir", o->saveDir, "write DIR/operand<i>.npy and DIR/out.npy")
      ->type_name("DIR");
  return [o, cmd] { return runEinsumCommand(*o, *cmd); };
}

}  // namespace matmulviz::cli
