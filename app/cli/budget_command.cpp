// matmulviz-cli budget SCRIPT --function F --budgets 0:1:0.1 [--solver dp|greedy] [--json PATH|-]:
// for each activation memory budget, compiles the script's function F with
// torch.compile(F, backend="aot_eager_decomp_partition") on the engine (python/matmulviz/_budget.py
// does the runs) and reports one row per budget: activation memory measured the PyTorch way
// (bytes and MiB), backward FLOPs measured with FlopCounterMode, the saved and recomputed values
// and the route PyTorch's partitioner took (core/partitioner). Exit status: 0, 1 when the script
// failed, 2 for bad input (a budget outside [0, 1] with PyTorch's text, no such function, an op
// the tracer does not support, F not differentiable or not returning a scalar). --graph-out FILE
// also writes F's traced joint graph (kind "budget-graph"); --no-sweep writes only that.
#include "app/cli/commands.h"
#include "app/cli/emit_outputs.h"
#include "app/cli/output_files.h"
#include "core/report/report_envelope.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

namespace matmulviz::cli {

namespace {

constexpr const char* kTracerPython = "/usr/bin/python3";

struct BudgetOptions {
  std::string script, function = "f", budgets = "0:1:0.1", solver = "dp", json, graphOut;
  bool noSweep = false;
};

/// Runs `python3 -m matmulviz._budget ...` writing its JSON to `out`; the child's stdout goes to
/// stderr (a script's own prints must not mix with `--json -`). Returns its exit status.
int runSweep(const BudgetOptions& o, const std::string& out) {
  const std::string path = pythonPackagePath();
  std::vector<std::string> args{kTracerPython, "-m",       "matmulviz._budget", o.script,
                                "--function",  o.function, "--budgets",         o.budgets,
                                "--solver",    o.solver};
  if (!o.noSweep) args.insert(args.end(), {"--out", out});
  if (!o.graphOut.empty()) args.insert(args.end(), {"--graph-out", o.graphOut});
  if (o.noSweep) args.emplace_back("--no-sweep");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::cout.flush();
  const pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    if (!path.empty()) {
      const char* old = std::getenv("PYTHONPATH");
      const std::string value = old && *old ? path + ":" + old : path;
      setenv("PYTHONPATH", value.c_str(), 1);
    }
    dup2(STDERR_FILENO, STDOUT_FILENO);
    execv(kTracerPython, argv.data());
    std::fprintf(stderr, "matmulviz-cli budget: could not start %s: %s\n", kTracerPython,
                 std::strerror(errno));
    _exit(2);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return 1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

std::string names(const nlohmann::ordered_json& list) {
  std::string s;
  for (const auto& n : list) s += (s.empty() ? "" : " ") + n.get<std::string>();
  return s.empty() ? "-" : s;
}

void writeText(std::ostream& os, const nlohmann::ordered_json& r) {
  const auto& eager = r["eager"];
  os << "activation memory budget sweep: " << r["script"].get<std::string>() << ", function "
     << r["function"].get<std::string>() << ", solver " << r["solver"].get<std::string>() << "\n"
     << "eager: activation " << eager["activation_bytes"].get<int64_t>() << " B (" << std::fixed
     << std::setprecision(3) << eager["activation_mib"].get<double>() << " MiB), backward "
     << eager["backward_flops"].get<int64_t>() << " FLOPs\n\n";
  os << std::setw(7) << "budget" << std::setw(14) << "activation B" << std::setw(10) << "MiB"
     << std::setw(16) << "backward FLOPs"
     << "  route\n";
  for (const auto& row : r["rows"]) {
    os << std::setw(7) << std::setprecision(3) << row["budget"].get<double>() << std::setw(14)
       << row["activation_bytes"].get<int64_t>() << std::setw(10)
       << row["activation_mib"].get<double>() << std::setw(16)
       << row["backward_flops"].get<int64_t>() << "  " << row["route"].get<std::string>() << "\n"
       << "         saved: " << names(row["saved"]) << "\n"
       << "         recomputed: " << names(row["recomputed"]) << "\n";
  }
}

int runBudgetCommand(const BudgetOptions& o) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(o.script, ec)) {
    std::cerr << "matmulviz-cli budget: no such script: " << o.script << "\n";
    return 2;
  }
  if (access(kTracerPython, X_OK) != 0) {
    std::cerr << "matmulviz-cli budget: " << kTracerPython
              << " not found (the Python module is built for Debian's python3: scripts/setup)\n";
    return 2;
  }
  if (o.noSweep && o.graphOut.empty()) {
    std::cerr << "matmulviz-cli budget: --no-sweep needs --graph-out FILE\n";
    return 2;
  }
  try {
    checkOutputPath(o.json, "--json");
    if (!o.graphOut.empty()) checkOutputPath(o.graphOut, "--graph-out");
  } catch (const std::invalid_argument& e) {
    std::cerr << "matmulviz-cli budget: " << e.what() << "\n";
    return 2;
  }
  char tmpl[] = "/tmp/matmulviz-budget-XXXXXX";
  const int fd = mkstemp(tmpl);
  if (fd < 0) {
    std::cerr << "matmulviz-cli budget: cannot create a temporary file: " << std::strerror(errno)
              << "\n";
    return 1;
  }
  close(fd);
  const int status = runSweep(o, tmpl);
  if (o.noSweep) {
    std::filesystem::remove(tmpl, ec);
    if (status == 0) std::cout << "wrote " << o.graphOut << "\n";
    return status == 0 ? 0 : status == 2 ? 2 : 1;
  }
  nlohmann::ordered_json body;
  if (status == 0) {
    std::ifstream in(tmpl);
    body = nlohmann::ordered_json::parse(in, nullptr, false);
  }
  std::filesystem::remove(tmpl, ec);
  if (status != 0) return status == 2 ? 2 : 1;
  if (body.is_discarded()) {
    std::cerr << "matmulviz-cli budget: the sweep wrote no readable JSON\n";
    return 1;
  }
  ReportWriters w;
  w.json = reportEnvelope("budget");
  for (const auto& [key, value] : body.items()) w.json[key] = value;
  w.text = [&](std::ostream& os) { writeText(os, w.json); };
  return emitOutputs({"budget", o.json, "", ""}, w);
}

}  // namespace

int traceToGraphFile(const std::string& script, const std::string& function,
                     const std::string& graphOut) {
  BudgetOptions o;
  o.script = script;
  o.function = function;
  o.graphOut = graphOut;
  o.noSweep = true;
  if (access(kTracerPython, X_OK) != 0) {
    std::cerr << "matmulviz-cli: " << kTracerPython << " not found (scripts/setup)\n";
    return 2;
  }
  const int status = runSweep(o, "");
  return status == 0 ? 0 : status == 2 ? 2 : 1;
}

Action addBudgetCommand(CLI::App& app) {
  auto o = std::make_shared<BudgetOptions>();
  CLI::App* cmd = app.add_subcommand(
      "budget",
      "Activation memory against recomputation, as torch.compile's partitioner decides it: "
      "compiles a script's function with backend=\"aot_eager_decomp_partition\" for each "
      "torch._functorch.config.activation_memory_budget and reports the activation memory and "
      "backward FLOPs the engine measured, the saved and recomputed values and the route");
  cmd->add_option("script", o->script, "the Python script (matmulviz.torch) defining FUNCTION")
      ->required();
  cmd->add_option("--function", o->function,
                  "the function to compile: no arguments, returns a scalar loss (default f)")
      ->type_name("NAME");
  cmd->add_option("--budgets", o->budgets,
                  "START:STOP:STEP (STOP included), a comma list or one number, each in [0, 1] "
                  "(default 0:1:0.1)")
      ->type_name("SPEC");
  cmd->add_option("--solver", o->solver, "the knapsack: dp | greedy (default dp)")
      ->check(CLI::IsMember({"dp", "greedy"}))
      ->type_name("SOLVER");
  cmd->add_option("--json", o->json, "write the report as JSON to PATH, or - for stdout")
      ->type_name("PATH|-");
  cmd->add_option("--graph-out", o->graphOut,
                  "also write FUNCTION's traced joint graph to FILE (report kind "
                  "\"budget-graph\", docs/partitioner.md), for the app's Budget view and "
                  "matmulviz-cli export --budget-graph")
      ->type_name("FILE");
  cmd->add_flag("--no-sweep", o->noSweep,
                "only trace and write --graph-out: compile nothing, measure nothing");
  return [o] { return runBudgetCommand(*o); };
}

}  // namespace matmulviz::cli
