// matmulviz-cli ladder: the speed ladder of the fast.ai lesson "Finishing up Matmul", one product
// timed as a simulated per-thread launch, a plain loop, einsum, BLAS and, where a GPU answers, the
// CUDA kernels and cuBLAS (kernels/ladder.h). Prints one table, or JSON with --json. Exit codes: 0
// success, 1 a rung failed, 2 bad input.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "app/cli/output_files.h"
#include "app/cli/tpb_option.h"
#include "core/memory/caching_allocator.h"
#include "core/memory/host_backing.h"
#include "core/util/format_units.h"
#include "core/util/parse_size.h"
#include "kernels/ladder.h"

namespace matmulviz::cli {
namespace {

struct LadderArgs {
  std::string m = "50000", k = "784", n = "10";  // the lesson's x_train @ weights
  std::string tpb = "16";
  std::string seed = "0";
  std::string repeats = "3";
  std::string simThreads = "0";
  std::string json;
};

nlohmann::ordered_json finiteOrNull(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json ladderJson(const kernels::LadderReport& r) {
  const kernels::LadderOptions& o = r.options;
  nlohmann::ordered_json rungs = nlohmann::ordered_json::array();
  const nlohmann::ordered_json null = nullptr;
  for (const kernels::LadderRung& g : r.rungs) {
    nlohmann::ordered_json rung;
    rung["name"] = g.name;
    rung["what"] = g.what;
    rung["ok"] = g.ok;
    rung["skipped"] = g.ok ? null : nlohmann::ordered_json(g.skipped);
    rung["time_s"] = g.ok ? nlohmann::ordered_json(g.seconds) : null;
    rung["gflops"] = g.ok ? nlohmann::ordered_json(g.gflops) : null;
    rung["speedup"] = g.ok && g.speedup > 0 ? finiteOrNull(g.speedup) : null;
    rung["max_rel_err"] = g.ok ? finiteOrNull(g.maxRelErr) : null;
    rungs.push_back(rung);
  }
  return {{"workload",
           {{"m", o.M},
            {"k", o.K},
            {"n", o.N},
            {"dtype", "float32"},
            {"tpb", o.tpb},
            {"seed", o.seed},
            {"repeats", o.repeats}}},
          {"flops", kernels::ladderFlops(o)},
          {"gpu", r.gpu},
          {"blas_threads", r.blasThreads},
          {"sim_threads", r.simThreads},
          {"rungs", rungs}};
}

void writeLadderText(std::ostream& os, const kernels::LadderReport& r) {
  const kernels::LadderOptions& o = r.options;
  char line[256];
  std::snprintf(line, sizeof line,
                "ladder: C [%lld, %lld] = A [%lld, %lld] @ B [%lld, %lld], float32, %.3g FLOPs; "
                "TPB %d, median of %d\n",
                static_cast<long long>(o.M), static_cast<long long>(o.N),
                static_cast<long long>(o.M), static_cast<long long>(o.K),
                static_cast<long long>(o.K), static_cast<long long>(o.N), kernels::ladderFlops(o),
                o.tpb, o.repeats);
  os << line << "\n";
  std::snprintf(line, sizeof line, "%-16s %11s %11s %10s %12s  %s\n", "rung", "time", "GFLOP/s",
                "speed-up", "max_rel_err", "what");
  os << line;
  for (const kernels::LadderRung& g : r.rungs) {
    if (!g.ok) {
      os << std::string(16 - std::min<std::size_t>(16, g.name.size()), ' ').insert(0, g.name)
         << " skipped: " << g.skipped << "\n";
      continue;
    }
    const std::string speedup = g.speedup > 0 ? formatFactor(g.speedup) : std::string("-");
    std::snprintf(line, sizeof line, "%-16s %11s %11.3g %10s %12.2g  %s\n", g.name.c_str(),
                  formatSeconds(g.seconds).c_str(), g.gflops, speedup.c_str(), g.maxRelErr,
                  g.what.c_str());
    os << line;
  }
  os << "\nspeed-up: time of the rung above / time of this one. max_rel_err: max|C - ref| / "
        "max|ref| against float64.\nBLAS threads: "
     << r.blasThreads << ". Simulator host threads: " << r.simThreads << ". GPU: " << r.gpu << "\n";
}

/// Parses and checks everything before any work; throws std::invalid_argument naming the
/// argument.
kernels::LadderOptions parseLadderArgs(const LadderArgs& a) {
  constexpr std::int64_t kIntMax = 2147483647;
  kernels::LadderOptions o;
  o.M = parsePositiveInt(a.m, "--m", 1, kIntMax);
  o.K = parsePositiveInt(a.k, "--k", 1, kIntMax);
  o.N = parsePositiveInt(a.n, "--n", 1, kIntMax);
  o.tpb = parseTpb(a.tpb);
  o.seed = static_cast<std::uint64_t>(parsePositiveInt(a.seed, "--seed", 0));
  o.repeats = static_cast<int>(parsePositiveInt(a.repeats, "--repeats", 1, 1000));
  o.simThreads = static_cast<unsigned>(parsePositiveInt(a.simThreads, "--sim-threads", 0, 1024));
  checkOutputPath(a.json, "--json");
  // float32 inputs and output twice (the engine's einsum holds copies), float64 ones for the
  // reference.
  const double elements = static_cast<double>(o.M) * static_cast<double>(o.K) +
                          static_cast<double>(o.K) * static_cast<double>(o.N) +
                          static_cast<double>(o.M) * static_cast<double>(o.N);
  const double need = 16 * elements;
  const std::int64_t available = availableHostMemoryBytes();
  if (need > 0.85 * static_cast<double>(available)) {
    throw std::invalid_argument("--m " + a.m + " --k " + a.k + " --n " + a.n +
                                ": too large for this machine: the ladder needs about " +
                                formatSize(static_cast<std::int64_t>(need)) + " but only " +
                                formatSize(available) + " are available");
  }
  return o;
}

int runLadderCommand(const LadderArgs& a) {
  kernels::LadderOptions o;
  try {
    o = parseLadderArgs(a);
    try {
      kernels::validateLadder(o);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("--m " + a.m + " --k " + a.k + " --n " + a.n + " --tpb " + a.tpb +
                                  ": " + e.what());
    }
  } catch (const std::invalid_argument& e) {
    std::cerr << "matmulviz-cli ladder: " << e.what() << "\n";
    return 2;
  }
  const kernels::LadderReport report =
      kernels::runLadder(o, [](std::size_t i, std::size_t count, const kernels::LadderRung& g) {
        std::cerr << "[matmulviz] ladder " << i + 1 << "/" << count << " " << g.name << ": "
                  << (g.ok ? formatSeconds(g.seconds) : "skipped") << "\n";
      });
  const nlohmann::ordered_json j = ladderJson(report);
  if (a.json == "-") {
    std::cout << j.dump(2) << "\n";
  } else {
    writeLadderText(std::cout, report);
    if (!a.json.empty()) {
      writeFileAtomically(a.json, [&](std::ostream& os) { os << j.dump(2) << "\n"; });
      std::cerr << "[matmulviz] wrote " << a.json << "\n";
    }
  }
  // A CPU rung that did not run is a failure; GPU rungs are skipped where no device answers.
  for (const kernels::LadderRung& g : report.rungs) {
    if (!g.ok && g.name.rfind("cuda", 0) != 0 && g.name != "cublas") return 1;
  }
  return 0;
}

}  // namespace

Action addLadderCommand(CLI::App& app) {
  auto a = std::make_shared<LadderArgs>();
  CLI::App* cmd = app.add_subcommand(
      "ladder",
      "Time one matmul as a simulated per-thread launch, a plain loop, einsum, BLAS and (with a "
      "GPU) the CUDA kernels and cuBLAS: the speed ladder of the fast.ai lesson");
  cmd->add_option("--m", a->m, "M: rows of A and C (default 50000, the lesson's images)");
  cmd->add_option("--k", a->k, "K: columns of A, rows of B (default 784 = 28 x 28 pixels)");
  cmd->add_option("--n", a->n, "N: columns of B and C (default 10 classes)");
  cmd->add_option("--tpb", a->tpb,
                  "threads per block side of the kernels, 1..32: blocks of TPB x TPB (default 16)");
  cmd->add_option("--seed", a->seed, "seed of the random inputs (default 0)");
  cmd->add_option("--repeats", a->repeats, "timed runs per rung; the median is shown (default 3)");
  cmd->add_option("--sim-threads", a->simThreads,
                  "host threads of the simulated rung (default 0: one per core; 1: one thread)");
  cmd->add_option("--json", a->json, "write the report as JSON to PATH, or - for stdout");
  return [a] { return runLadderCommand(*a); };
}

}  // namespace matmulviz::cli
